#pragma once
/// @file
/// `Event`: a flag that coroutines can wait for without holding a thread.

#include <coroutine>
#include <stop_token>

#include <spillway/core/mutex.hpp>
#include <spillway/exec/detail/wait_list.hpp>
#include <spillway/exec/executor.hpp>

namespace spillway::exec {

/// A manual-reset event that starts unset. `co_await event.wait()` suspends
/// until `set()` is called (or returns at once if it was); once set, it
/// stays set.
///
/// Waiters resume on the executor given at construction, never inside
/// `set()`. A wait given a stop token ends early when stop is requested, and
/// at once if it was requested before the wait, even if the event is set.
///
/// Thread safety: every member function may be called concurrently.
/// Requires: no coroutine is waiting when the event is destroyed.
class Event {
  public:
    /// Resumes waiters on `executor`, which must outlive the event.
    explicit Event(Executor& executor) noexcept : executor_(executor) {}

    /// Sets the event and resumes every waiter. Idempotent. Everything the
    /// caller did before `set()` happens before the waiters resume.
    void set() noexcept;

    /// Whether `set()` has been called.
    [[nodiscard]] bool is_set() const noexcept;

    /// Awaitable returned by `wait()`.
    class Awaiter : private detail::Waiter {
      public:
        Awaiter(Event& event, std::stop_token stop) noexcept
            : Waiter(event.executor_, event.mutex_, std::move(stop)), event_(event) {}
        [[nodiscard]] bool await_ready() const noexcept { return false; }
        bool await_suspend(std::coroutine_handle<> handle);
        /// True once the event is set; false if a stop request ended the wait first.
        bool await_resume() noexcept { return !finish(); }

      private:
        friend Event;
        friend detail::WaitList;
        Event& event_;
    };

    /// `co_await event.wait(stop)` yields true once the event is set, or
    /// false if `stop` is requested first: while it waits, or before it
    /// began (whether or not the event is set then).
    [[nodiscard]] Awaiter wait(std::stop_token stop = {}) noexcept { return Awaiter(*this, std::move(stop)); }

  private:
    Executor& executor_;
    mutable Mutex mutex_;
    bool set_ SPILLWAY_GUARDED_BY(mutex_) = false;
    /// Coroutines waiting for `set()`; empty once it has been called.
    detail::WaitList waiters_ SPILLWAY_GUARDED_BY(mutex_);
};

}  // namespace spillway::exec
