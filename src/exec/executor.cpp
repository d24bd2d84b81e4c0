#include <spillway/exec/executor.hpp>

#include <utility>

namespace spillway::exec {
namespace {

/// The executor whose work this thread is running; see Executor::current().
thread_local Executor* current_executor = nullptr;

}  // namespace

Executor* Executor::current() noexcept { return current_executor; }

Executor::CurrentScope::CurrentScope(Executor& executor) noexcept
    : previous_(std::exchange(current_executor, &executor)) {}

Executor::CurrentScope::~CurrentScope() { current_executor = previous_; }

bool SleepAwaiter::await_suspend(std::coroutine_handle<> handle) {
    handle_ = handle;
    // Registered before the timer is armed, so a stop request that arrives
    // now finds nothing to cancel and the check below catches it.
    on_stop_.emplace(stop_, CutShort{this});
    executor_.post_after(*this, duration_);
    // The coroutine cannot resume before the exchange below, so the awaiter
    // is still alive here even if the timer has already fired.
    if (stop_.stop_requested() && executor_.cancel(*this)) {
        elapsed_ = false;
        return false;
    }
    // acq_rel: pairs with the exchange in on_due(); the second one resumes.
    return !resumed_.exchange(true, std::memory_order_acq_rel);
}

void SleepAwaiter::CutShort::operator()() const noexcept {
    if (sleeper->executor_.cancel(*sleeper)) {
        sleeper->elapsed_ = false;
        sleeper->executor_.post(*sleeper);
    }
}

void SleepAwaiter::on_due(Work& work) noexcept {
    auto& sleeper = static_cast<SleepAwaiter&>(work);
    // acq_rel: pairs with the exchange at the end of await_suspend().
    if (sleeper.resumed_.exchange(true, std::memory_order_acq_rel)) {
        sleeper.handle_.resume();
    }
}

}  // namespace spillway::exec
