#pragma once
/// @file
/// `Notification`, the one-shot flag that every blocking wait in exec/ ends
/// on, and that an `Executor` can wake so the waiting thread helps with work.

#include <atomic>

#include <spillway/core/mutex.hpp>

namespace spillway::exec {

/// A one-shot event a thread blocks on: once `notify()` is called, every
/// wait returns, now and later.
///
/// Besides the notification itself it carries a *wake-up*: `wake()` makes a
/// thread blocked in `wait_or_wake()` return without the notification being
/// set. Executors use it to send a waiting thread off to run newly queued work
/// (see `Executor::wait`).
///
/// Thread safety: every member function may be called concurrently.
/// Lifetime: a waiter that has seen the notification (`wait()` or
/// `wait_or_wake()` returned true) synchronizes with the end of `notify()`,
/// so it may destroy the object right away.
class Notification {
  public:
    Notification() = default;
    Notification(Notification const&) = delete;
    Notification& operator=(Notification const&) = delete;

    /// Sets the notification and wakes every waiter. Calling it again does
    /// nothing. Memory ordering: everything the caller did before `notify()`
    /// happens before the return of any wait that sees it.
    void notify() noexcept;

    /// Whether `notify()` has been called. Never blocks, never takes a lock,
    /// so an executor may poll it while it spins; a waiter that sees `true`
    /// still calls `wait()` before it destroys the object.
    [[nodiscard]] bool has_been_notified() const noexcept {
        // acquire: pairs with the release store in notify().
        return notified_.load(std::memory_order_acquire);
    }

    /// Blocks until `notify()` has been called.
    void wait() noexcept;

    /// Blocks until `notify()` has been called or `wake()` is called; a
    /// `wake()` that came before the call counts. Returns whether the
    /// notification is set. Consumes the wake-up.
    bool wait_or_wake() noexcept;

    /// Makes the current or next `wait_or_wake()` return.
    void wake() noexcept;

    /// Clears the notification and any wake-up, for reuse. Requires: no
    /// thread waits on it or may still notify or wake it (for instance, the
    /// one waiter has seen it set and nothing else refers to it).
    void reset() noexcept;

  private:
    mutable Mutex mutex_;
    CondVar changed_;
    /// Written only with `mutex_` held; atomic so `has_been_notified` can poll.
    std::atomic<bool> notified_{false};
    /// A `wake()` that no `wait_or_wake()` has consumed yet.
    bool woken_ SPILLWAY_GUARDED_BY(mutex_) = false;
};

}  // namespace spillway::exec
