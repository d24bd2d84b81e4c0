#pragma once
/// @file
/// `TimerQueue`: the timer thread behind `Executor::post_after`, for
/// implementations of `Executor`.

#include <chrono>
#include <cstddef>
#include <functional>
#include <set>
#include <thread>

#include <spillway/core/mutex.hpp>
#include <spillway/exec/executor.hpp>

namespace spillway::exec {

/// Hands each `TimedWork` to an executor's `post` once its deadline passes.
/// One thread, started at the first `schedule`, sleeps until the earliest
/// deadline; a sleeping coroutine costs a set entry, not a thread.
///
/// Thread safety: every member function may be called concurrently.
class TimerQueue {
  public:
    /// Posts due work to `target`. Requires: `target` outlives the queue.
    explicit TimerQueue(Executor& target) noexcept : target_(target) {}
    /// Stops the thread. Requires: no timer is pending; a pending one means a
    /// coroutine would never resume, so that aborts.
    ~TimerQueue();
    TimerQueue(TimerQueue const&) = delete;
    TimerQueue& operator=(TimerQueue const&) = delete;

    /// Posts `work` to the target once `delay` has passed (at once if it is
    /// not positive). Requires: `work` is not pending and stays alive until
    /// it runs or is cancelled.
    /// @throws std::bad_alloc, std::system_error if the thread cannot start.
    void schedule(TimedWork& work, std::chrono::nanoseconds delay);

    /// Removes `work` if it is pending; returns whether it was. Work already
    /// handed to the target is not pending.
    [[nodiscard]] bool cancel(TimedWork& work) noexcept;

    /// How many timers are pending.
    [[nodiscard]] std::size_t pending() const;

  private:
    /// Orders timers by deadline, ties by address, so each entry is unique.
    struct EarlierDeadline {
        bool operator()(TimedWork const* left, TimedWork const* right) const noexcept {
            if (left->deadline != right->deadline) {
                return left->deadline < right->deadline;
            }
            return std::less<TimedWork const*>{}(left, right);
        }
    };

    /// The timer thread: posts due work, sleeps until the next deadline.
    void run();

    Executor& target_;

    mutable Mutex mutex_;
    /// Signalled when an earlier deadline arrives or the queue stops.
    CondVar changed_;
    /// Work waiting for its deadline; each entry is alive and owned by a
    /// suspended coroutine or a join.
    std::set<TimedWork*, EarlierDeadline> pending_ SPILLWAY_GUARDED_BY(mutex_);
    bool stopping_ SPILLWAY_GUARDED_BY(mutex_) = false;
    /// Started by the first schedule(); joined by the destructor.
    std::thread thread_ SPILLWAY_GUARDED_BY(mutex_);
};

}  // namespace spillway::exec
