#include <spillway/exec/timer_queue.hpp>

#include <spillway/core/deadline.hpp>
#include <spillway/core/error.hpp>

namespace spillway::exec {

TimerQueue::~TimerQueue() {
    std::thread thread;
    {
        MutexLock lock(mutex_);
        SPILLWAY_ASSERT(pending_.empty(), pending_.size()
                        << " timers are still pending; every sleep must end (or be cancelled) "
                           "before its executor is destroyed");
        stopping_ = true;
        thread = std::move(thread_);
    }
    changed_.notify_all();
    if (thread.joinable()) {
        thread.join();
    }
}

void TimerQueue::schedule(TimedWork& work, std::chrono::nanoseconds delay) {
    MutexLock lock(mutex_);
    if (!thread_.joinable()) {
        thread_ = std::thread([this] { run(); });
    }
    work.deadline = deadline_after(std::chrono::steady_clock::now(), delay);
    auto const inserted = pending_.insert(&work).first;
    if (inserted == pending_.begin()) {
        changed_.notify_all();
    }
}

bool TimerQueue::cancel(TimedWork& work) noexcept {
    MutexLock lock(mutex_);
    return pending_.erase(&work) > 0;
}

std::size_t TimerQueue::pending() const {
    MutexLock lock(mutex_);
    return pending_.size();
}

void TimerQueue::run() {
    MutexLock lock(mutex_);
    while (!stopping_) {
        if (pending_.empty()) {
            changed_.wait(lock, [&]() SPILLWAY_REQUIRES(mutex_) { return stopping_ || !pending_.empty(); });
            continue;
        }
        auto const now = std::chrono::steady_clock::now();
        auto const next = (*pending_.begin())->deadline;
        if (next > now) {
            changed_.wait_for(lock, next - now, [&]() SPILLWAY_REQUIRES(mutex_) {
                return stopping_ || pending_.empty() || (*pending_.begin())->deadline < next;
            });
            continue;
        }
        while (!pending_.empty() && (*pending_.begin())->deadline <= now) {
            TimedWork& due = **pending_.begin();
            pending_.erase(pending_.begin());
            target_.post(due);
        }
    }
}

}  // namespace spillway::exec
