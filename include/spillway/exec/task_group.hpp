#pragma once
/// @file
/// `TaskGroup`: structured concurrency for a dynamic set of functions.

#include <concepts>
#include <cstddef>
#include <exception>
#include <functional>
#include <stop_token>
#include <type_traits>

#include <spillway/core/mutex.hpp>
#include <spillway/exec/detail/detached.hpp>
#include <spillway/exec/executor.hpp>
#include <spillway/exec/task.hpp>

namespace spillway::exec {

/// A function a `TaskGroup` can run: called with the group's stop token, it
/// returns `void`, or a `Task` that the group awaits.
template <typename Fn>
concept GroupFunction = std::invocable<Fn&, std::stop_token const&>
                        && (std::is_void_v<std::invoke_result_t<Fn&, std::stop_token const&>>
                            || detail::is_task<std::invoke_result_t<Fn&, std::stop_token const&>>);

/// Runs functions on an executor and waits for all of them: nothing spawned
/// in a group outlives it, so spawned functions may borrow anything that
/// outlives the group.
///
/// Fail-fast: the first exception a function throws is kept, and the group
/// requests stop; functions that have not started by then never start, and
/// running ones see the request through their stop token. `wait()` returns
/// once every function has finished and rethrows that first exception.
///
/// Thread safety: `spawn`, `request_stop` and `stop_token` may be called
/// concurrently from any thread, including from spawned functions. `wait`
/// and the destructor are the owner's: never concurrent with each other,
/// and `wait` only while no `spawn` can race with the last function
/// finishing (spawn from the owner before `wait`, or from running functions).
class TaskGroup {
  public:
    /// Runs functions on `executor`, which must outlive the group.
    explicit TaskGroup(Executor& executor) noexcept : executor_(executor) {}

    /// Requests stop, then waits (running the executor's work meanwhile) for
    /// every spawned function to finish; a pending exception is dropped.
    ~TaskGroup();
    TaskGroup(TaskGroup const&) = delete;
    TaskGroup& operator=(TaskGroup const&) = delete;

    /// Queues `fn(stop_token)` to run on the executor, or to be skipped if
    /// stop has been requested by the time it would start. Takes ownership
    /// of `fn` and destroys it when it has run (or been skipped).
    /// @throws std::bad_alloc if the function cannot be queued.
    template <GroupFunction Fn>
    void spawn(Fn fn) {
        auto spawned = run(std::move(fn));
        {
            MutexLock lock(mutex_);
            ++running_;
        }
        std::move(spawned).start(Finished{this});
    }

    /// Blocks until every function spawned so far has finished, running the
    /// executor's work meanwhile (so it is safe on one of its threads).
    /// @throws the first exception a function threw (once; a later `wait`
    /// reports only newer failures).
    void wait();

    /// Asks running functions to stop and keeps queued ones from starting.
    void request_stop() noexcept { stop_source_.request_stop(); }

    /// The token every spawned function receives.
    [[nodiscard]] std::stop_token stop_token() const noexcept { return stop_source_.get_token(); }

    [[nodiscard]] Executor& executor() const noexcept { return executor_; }

  private:
    /// Called when a spawned coroutine is gone.
    struct Finished {
        TaskGroup* group;
        void operator()() const noexcept { group->finish_one(); }
    };

    template <typename Fn>
    detail::Detached<Finished> run(Fn fn) {
        co_await executor_.schedule();
        std::stop_token const stop = stop_source_.get_token();
        if (stop.stop_requested()) {
            co_return;
        }
        try {
            if constexpr (std::is_void_v<std::invoke_result_t<Fn&, std::stop_token const&>>) {
                std::invoke(fn, stop);
            } else {
                co_await std::invoke(fn, stop);
            }
        } catch (...) {
            fail(std::current_exception());
        }
    }

    /// Keeps `error` if it is the first, and requests stop.
    void fail(std::exception_ptr error) noexcept;
    void finish_one() noexcept;
    /// Waits until nothing runs; returns the pending exception, if any.
    std::exception_ptr wait_for_all() noexcept;

    Executor& executor_;
    std::stop_source stop_source_;

    Mutex mutex_;
    /// Spawned functions whose coroutine is not gone yet.
    std::size_t running_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    /// The first exception not yet reported by `wait`.
    std::exception_ptr error_ SPILLWAY_GUARDED_BY(mutex_);
    /// The owner blocked in `wait`, notified when `running_` drops to 0.
    Notification* waiter_ SPILLWAY_GUARDED_BY(mutex_) = nullptr;
};

}  // namespace spillway::exec
