#pragma once
/// @file
/// `Semaphore`: a counting semaphore that coroutines acquire without holding
/// a thread.

#include <coroutine>
#include <cstddef>
#include <stop_token>

#include <spillway/core/mutex.hpp>
#include <spillway/exec/detail/wait_list.hpp>
#include <spillway/exec/executor.hpp>

namespace spillway::exec {

/// A counting semaphore with FIFO hand-over: `release` gives permits to the
/// oldest waiters first, and a new acquirer never overtakes a waiting one.
///
/// Waiters resume on the executor given at construction, never inside
/// `release()`. An acquire given a stop token ends early, without a permit,
/// when stop is requested, and at once if it was requested before the
/// acquire, even if a permit is free.
///
/// Thread safety: every member function may be called concurrently.
/// Requires: no coroutine is waiting when the semaphore is destroyed.
class Semaphore {
  public:
    /// Starts with `permits` available; resumes waiters on `executor`, which
    /// must outlive the semaphore.
    Semaphore(Executor& executor, std::size_t permits) noexcept : executor_(executor), available_(permits) {}

    /// Takes a permit if one is available and nobody is waiting; returns
    /// whether it did.
    [[nodiscard]] bool try_acquire() noexcept;

    /// Returns `count` permits, handing them to waiters in FIFO order.
    void release(std::size_t count = 1) noexcept;

    /// Permits available now (a snapshot).
    [[nodiscard]] std::size_t available() const noexcept;

    /// Awaitable returned by `acquire()`.
    class Awaiter : private detail::Waiter {
      public:
        Awaiter(Semaphore& semaphore, std::stop_token stop) noexcept
            : Waiter(semaphore.executor_, semaphore.mutex_, std::move(stop)), semaphore_(semaphore) {}
        [[nodiscard]] bool await_ready() const noexcept { return false; }
        bool await_suspend(std::coroutine_handle<> handle);
        /// True with a permit taken; false if a stop request ended the wait
        /// first (no permit is taken then).
        bool await_resume() noexcept { return !finish(); }

      private:
        friend Semaphore;
        friend detail::WaitList;
        Semaphore& semaphore_;
    };

    /// `co_await semaphore.acquire(stop)` yields true once a permit is taken,
    /// or false if `stop` is requested first: while it waits, or before it
    /// began (whether or not a permit is free then).
    [[nodiscard]] Awaiter acquire(std::stop_token stop = {}) noexcept { return Awaiter(*this, std::move(stop)); }

  private:
    Executor& executor_;
    mutable Mutex mutex_;
    /// Permits nobody holds; zero while anyone waits.
    std::size_t available_ SPILLWAY_GUARDED_BY(mutex_);
    detail::WaitList waiters_ SPILLWAY_GUARDED_BY(mutex_);
};

}  // namespace spillway::exec
