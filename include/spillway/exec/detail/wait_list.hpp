#pragma once
/// @file
/// `Waiter` and `WaitList`: the suspended coroutines of `Event`, `Semaphore`
/// and `Channel`, with cancellation by `std::stop_token`.

#include <coroutine>
#include <functional>
#include <optional>
#include <stop_token>

#include <spillway/core/error.hpp>
#include <spillway/core/mutex.hpp>
#include <spillway/exec/executor.hpp>

namespace spillway::exec::detail {

class WaitList;

/// Base of an awaiter that may wait in a primitive's `WaitList` until the
/// primitive completes the wait or a stop request cancels it.
///
/// Protocol of the derived awaiter's `await_suspend`:
/// 1. `prepare(handle)` registers the stop callback (which may run at once);
/// 2. with the primitive's mutex held: if `cancelled(lock)`, don't suspend;
///    if the wait can be satisfied now, `complete(lock)` without suspending;
///    otherwise `enqueue(lock, list)` and suspend.
/// The primitive completes a queued waiter with `complete(lock)` after
/// taking it off the list. A completed or cancelled waiter that had
/// suspended is resumed through the executor, never on the thread that
/// completed or cancelled it. `await_resume` calls `finish()` first.
///
/// States, each change made with the primitive's mutex held (passed in as
/// `lock` to prove it): preparing -> waiting -> completed | cancelled, or
/// preparing -> cancelled | completed without ever waiting.
class Waiter : public Work {
  public:
    Waiter(Waiter const&) = delete;
    Waiter& operator=(Waiter const&) = delete;

    /// Marks the wait completed; resumes the coroutine if it is suspended.
    /// Requires: `lock` holds the primitive's mutex, and the waiter is not
    /// on a list (it was just popped, or never enqueued).
    void complete(MutexLock const& lock) noexcept;

  protected:
    /// `mutex` is the primitive's; `stop` cancels the wait.
    Waiter(Executor& executor, Mutex& mutex, std::stop_token stop) noexcept
        : Work(&resume), executor_(executor), mutex_(mutex), stop_(std::move(stop)) {}
    ~Waiter() = default;

    /// Step 1 of the protocol. Requires: the primitive's mutex is not held.
    void prepare(std::coroutine_handle<> handle);
    /// Whether a stop request cancelled the wait before it was enqueued.
    [[nodiscard]] bool cancelled(MutexLock const& lock) const noexcept;
    /// Links the waiter at the back of `list` and marks it waiting.
    void enqueue(MutexLock const& lock, WaitList& list) noexcept;
    /// For `await_resume`: ends the stop callback and returns whether the
    /// wait was cancelled rather than completed.
    bool finish() noexcept;

  private:
    friend class WaitList;

    enum class State : unsigned char { preparing, waiting, completed, cancelled };

    /// Cancels the wait on a stop request unless it has completed.
    struct Cancel {
        Waiter* waiter;
        void operator()() const noexcept;
    };

    static void resume(Work& work) noexcept { static_cast<Waiter&>(work).handle_.resume(); }

    Executor& executor_;
    Mutex& mutex_;
    std::stop_token const stop_;
    std::coroutine_handle<> handle_;
    /// Guarded by the primitive's mutex (`mutex_`); see the states above.
    State state_ = State::preparing;
    /// The list the waiter is on while waiting, and its neighbours there;
    /// guarded by the primitive's mutex.
    WaitList* list_ = nullptr;
    Waiter* previous_ = nullptr;
    Waiter* next_ = nullptr;
    std::optional<std::stop_callback<Cancel>> on_stop_;
};

/// Waiters in FIFO order, linked through the waiters themselves.
/// Thread safety: guarded by the owning primitive's mutex.
class WaitList {
  public:
    WaitList() = default;
    /// A list that calls `after_cancel` (with the primitive's mutex held)
    /// each time a stop request takes a waiter off it, for a primitive whose
    /// waiters behind that one may go on now. `after_cancel` must not throw.
    explicit WaitList(std::function<void(MutexLock const& lock)> after_cancel) noexcept
        : after_cancel_(std::move(after_cancel)) {}
    WaitList(WaitList const&) = delete;
    WaitList& operator=(WaitList const&) = delete;
    /// Requires: empty; a primitive must outlive its waiters.
    ~WaitList() { SPILLWAY_ASSERT(head_ == nullptr, "a primitive of exec/ was destroyed while coroutines wait on it"); }

    [[nodiscard]] bool empty() const noexcept { return head_ == nullptr; }

    /// The oldest waiter, left on the list, as the derived awaiter type `W`
    /// the owning primitive puts on this list. Requires: not empty.
    template <typename W>
    [[nodiscard]] W& front() const noexcept {
        return static_cast<W&>(*head_);
    }

    /// Unlinks and returns the oldest waiter, as the derived awaiter type
    /// `W` the owning primitive puts on this list. Requires: not empty.
    template <typename W>
    W& pop_front() noexcept {
        Waiter& front = *head_;
        remove(front);
        return static_cast<W&>(front);
    }

  private:
    friend class Waiter;
    void push_back(Waiter& waiter) noexcept;
    void remove(Waiter& waiter) noexcept;

    Waiter* head_ = nullptr;
    Waiter* tail_ = nullptr;
    std::function<void(MutexLock const& lock)> const after_cancel_;
};

}  // namespace spillway::exec::detail
