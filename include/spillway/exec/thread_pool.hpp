#pragma once
/// @file
/// `ThreadPool`, spillway's production `Executor`.

#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include <spillway/core/mutex.hpp>
#include <spillway/core/options.hpp>
#include <spillway/exec/executor.hpp>
#include <spillway/exec/timer_queue.hpp>

namespace spillway::exec {

/// A fixed set of worker threads that run posted `Work` in FIFO order, plus
/// a `TimerQueue` for `post_after`.
///
/// Idle workers spin briefly, then sleep until work is posted. A thread that
/// calls `wait` - a worker inside a nested join, or the thread that owns a
/// join - runs queued work until its notification is set, and sleeps in the
/// pool's idle list when there is none, so `post` wakes it like a worker.
/// That is why nested joins never deadlock the pool: every thread that
/// blocks on exec/ keeps running the work it may be waiting for.
///
/// Thread safety: every member function may be called concurrently.
class ThreadPool final : public Executor {
  public:
    /// How the pool is sized.
    struct Config {
        /// Worker threads; at least 1. Default: the hardware concurrency.
        std::size_t threads = default_threads();

        /// Reads option `threads` (a positive integer; `0` or unset means
        /// the hardware concurrency).
        /// @throws InvalidArgument naming the option if the value is malformed.
        static Config from_options(Options const& options);

        /// The number of hardware threads, or 1 if it is unknown.
        static std::size_t default_threads() noexcept;
    };

    /// Starts `config.threads` workers.
    /// @throws InvalidArgument if `config.threads` is 0.
    explicit ThreadPool(Config config);
    /// Starts one worker per hardware thread.
    ThreadPool();

    /// Runs the work still queued, then joins the workers. Requires: no
    /// timer is pending and no thread is inside `wait`; nothing is posted
    /// from outside once destruction has begun.
    ~ThreadPool() override;

    void post(Work& work) noexcept override;
    void post_after(TimedWork& work, std::chrono::nanoseconds delay) override;
    [[nodiscard]] bool cancel(TimedWork& work) noexcept override;
    void wait(Notification& notification) override;
    [[nodiscard]] std::size_t concurrency() const noexcept override { return workers_.size(); }

  private:
    /// The loop each worker runs until the pool stops and the queue is empty.
    void work(Notification& parking);
    /// Pops the oldest queued work, or returns null.
    Work* take() noexcept;
    /// Spins briefly until work is queued or `done` (if given) is set;
    /// returns whether either happened.
    bool spin_until_work(Notification const* done) const noexcept;
    /// Adds `parking` to the idle threads unless work is queued or the pool
    /// is stopping; returns whether it did, so the caller should sleep on it.
    bool park(Notification& parking) noexcept;
    /// Whether the pool is stopping and no work is left: a worker may exit.
    bool finished() noexcept;
    /// Removes `parking` from the idle threads if it is still there, and
    /// returns whether it was: if not, a `post` took it off to run its work.
    bool unpark(Notification& parking) noexcept;
    /// Wakes an idle thread if work is queued.
    void wake_for_queued_work() noexcept;
    /// Wakes the most recently idle thread, if any.
    void wake_one(MutexLock const& lock) noexcept SPILLWAY_REQUIRES(mutex_);

    // Constant after construction.
    std::vector<std::thread> workers_;
    /// One per worker: what it sleeps on while idle.
    std::vector<std::unique_ptr<Notification>> parking_;

    /// Lock order: a caller's locks, then `mutex_`, then a `Notification`'s.
    Mutex mutex_;
    /// Queued work in FIFO order, linked through `Work::next`.
    Work* head_ SPILLWAY_GUARDED_BY(mutex_) = nullptr;
    Work* tail_ SPILLWAY_GUARDED_BY(mutex_) = nullptr;
    /// Threads asleep waiting for work (workers and waiting threads), each
    /// by what it sleeps on; `post` wakes the most recent.
    std::vector<Notification*> idle_ SPILLWAY_GUARDED_BY(mutex_);
    bool stopping_ SPILLWAY_GUARDED_BY(mutex_) = false;

    /// How many works are queued. Written under `mutex_`; atomic so that
    /// spinning threads can poll it without the lock (a hint, re-checked
    /// under the lock).
    std::atomic<std::size_t> queued_{0};

    TimerQueue timers_{*this};
};

}  // namespace spillway::exec
