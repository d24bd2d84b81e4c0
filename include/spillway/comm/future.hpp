#pragma once
/// @file
/// The result of a communication operation that completes later: a value (or
/// an error) that can be tested for and waited on.

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include <spillway/core/error.hpp>
#include <spillway/core/mutex.hpp>

namespace spillway::comm {

namespace detail {

/// What a `Future` shares with the operation that completes it: a value or an
/// error, set once, and a condition variable to wait for it.
///
/// Thread safety: every member function may be called concurrently. The lock
/// is a leaf: nothing else is locked while it is held.
template <typename T>
class FutureState {
  public:
    /// The stored value: `std::monostate` stands in for `void`.
    using Value = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

    /// Completes the operation with `value` and wakes every waiter.
    /// Requires: not completed yet (checked; aborts otherwise).
    void set_value(Value value) {
        MutexLock lock(mutex_);
        SPILLWAY_ASSERT(!completed_, "a future was completed twice");
        value_.emplace(std::move(value));
        completed_ = true;
        completed_cv_.notify_all();
    }

    /// Completes the operation with `error` and wakes every waiter.
    /// Requires: not completed yet (checked; aborts otherwise).
    void set_error(std::exception_ptr error) {
        MutexLock lock(mutex_);
        SPILLWAY_ASSERT(!completed_, "a future was completed twice");
        error_ = std::move(error);
        completed_ = true;
        completed_cv_.notify_all();
    }

    /// Whether the operation has completed, successfully or not.
    [[nodiscard]] bool completed() const {
        MutexLock lock(mutex_);
        return completed_;
    }

    /// Blocks until the operation has completed.
    void wait() const {
        MutexLock lock(mutex_);
        completed_cv_.wait(lock, [this]() SPILLWAY_REQUIRES(mutex_) { return completed_; });
    }

    /// Blocks until the operation has completed or `timeout` has passed;
    /// returns whether it has completed.
    template <typename Rep, typename Period>
    bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
        MutexLock lock(mutex_);
        return completed_cv_.wait_for(lock, timeout, [this]() SPILLWAY_REQUIRES(mutex_) {
            return completed_;
        });
    }

    /// Waits, then moves the value out or rethrows the error.
    /// Requires: called at most once (`Future::get` ensures it).
    T take() {
        MutexLock lock(mutex_);
        completed_cv_.wait(lock, [this]() SPILLWAY_REQUIRES(mutex_) { return completed_; });
        if (error_) {
            std::rethrow_exception(error_);
        }
        if constexpr (!std::is_void_v<T>) {
            return std::move(*value_);
        }
    }

  private:
    mutable Mutex mutex_;
    mutable CondVar completed_cv_;
    /// Set once; then exactly one of `value_` and `error_` is set.
    bool completed_ SPILLWAY_GUARDED_BY(mutex_) = false;
    std::optional<Value> value_ SPILLWAY_GUARDED_BY(mutex_);
    std::exception_ptr error_ SPILLWAY_GUARDED_BY(mutex_);
};

}  // namespace detail

/// The outcome of a send (`Future<void>`) or a receive (`Future<Message>`)
/// that completes in the background.
///
/// The communicator completes the future on its own (see "Progress" in
/// `Communicator`): the holder never has to call anything for the operation
/// to advance, so a caller that only tests, or only waits, never stalls it.
/// Destroying a future does not cancel its operation, which still completes.
///
/// Thread safety: `valid`, `test`, `wait` and `wait_for` may be called
/// concurrently from any threads. `get` consumes the future and needs the
/// caller to own it. A future may be moved between threads.
template <typename T>
class Future {
  public:
    /// A future with no operation: `valid()` is false.
    Future() = default;

    /// A future completed through `state` (for communicator implementations).
    explicit Future(std::shared_ptr<detail::FutureState<T>> state) : state_(std::move(state)) {}

    /// A future that has already completed with `value`.
    static Future ready(typename detail::FutureState<T>::Value value) {
        auto state = std::make_shared<detail::FutureState<T>>();
        state->set_value(std::move(value));
        return Future(std::move(state));
    }

    /// Whether the future refers to an operation; false when default
    /// constructed, moved from, or after `get`.
    [[nodiscard]] bool valid() const noexcept { return state_ != nullptr; }

    /// Whether the operation has completed (successfully or with an error).
    /// Never blocks.
    /// @throws InvalidArgument if `!valid()`.
    [[nodiscard]] bool test() const { return checked_state("test").completed(); }

    /// Blocks until the operation has completed.
    /// @throws InvalidArgument if `!valid()`.
    void wait() const { checked_state("wait").wait(); }

    /// Blocks until the operation has completed or `timeout` has passed;
    /// returns whether it has completed.
    /// @throws InvalidArgument if `!valid()`.
    template <typename Rep, typename Period>
    bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
        return checked_state("wait_for").wait_for(timeout);
    }

    /// Waits for the operation, then returns its value, or rethrows the
    /// error it failed with. Leaves the future invalid.
    /// @throws InvalidArgument if `!valid()`; otherwise whatever the
    ///         operation failed with (an `IoError` for a failed MPI call).
    T get() {
        auto state = std::move(state_);
        SPILLWAY_EXPECTS(state != nullptr, "Future::get() on a future that is not valid", InvalidArgument);
        return state->take();
    }

  private:
    detail::FutureState<T>& checked_state(char const* what) const {
        SPILLWAY_EXPECTS(
            state_ != nullptr,
            "Future::" << what << "() on a future that is not valid (default constructed, moved from, "
                       << "or already consumed by get())",
            InvalidArgument
        );
        return *state_;
    }

    std::shared_ptr<detail::FutureState<T>> state_;
};

}  // namespace spillway::comm
