#pragma once
/// @file
/// `Task<T>`: a lazy coroutine that produces a `T` (or throws) when awaited.

#include <atomic>
#include <concepts>
#include <coroutine>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include <spillway/core/error.hpp>

namespace spillway::exec {

template <typename T = void>
class Task;

namespace detail {

/// What every task promise shares: the awaiter to resume, the exception, and
/// the handshake that decides who resumes the awaiter.
///
/// Resuming the awaiter uses symmetric transfer (the final suspend returns
/// the awaiter's handle). g++ 12 makes that a tail call only at -O2 and not
/// under AddressSanitizer, so a task that finishes before its awaiter has
/// suspended does not resume the awaiter at all: the awaiter sees that in
/// `await_suspend`, declines to suspend, and carries on in its own frame.
/// The stack therefore stays flat for a loop of a million awaits of tasks
/// that finish synchronously, in every build type.
class TaskPromiseBase {
  public:
    /// Resumes the awaiter if it has suspended already; see the class comment.
    class FinalAwaiter {
      public:
        [[nodiscard]] bool await_ready() const noexcept { return false; }
        template <typename Promise>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> self) noexcept {
            TaskPromiseBase& promise = self.promise();
            // acq_rel: pairs with the exchange in start(); the second one
            // resumes the awaiter.
            if (promise.resume_claimed_.exchange(true, std::memory_order_acq_rel)) {
                return promise.awaiter_;
            }
            return std::noop_coroutine();
        }
        void await_resume() const noexcept {}
    };

    [[nodiscard]] std::suspend_always initial_suspend() const noexcept { return {}; }
    [[nodiscard]] FinalAwaiter final_suspend() const noexcept { return {}; }
    void unhandled_exception() noexcept { error_ = std::current_exception(); }

    /// Runs the task, whose handle is `self`, on the calling thread until it
    /// finishes or suspends, with `awaiter` to resume when it finishes.
    /// Returns whether the awaiter must suspend (the task has not finished).
    bool start(std::coroutine_handle<> self, std::coroutine_handle<> awaiter) noexcept {
        awaiter_ = awaiter;
        self.resume();
        // acq_rel: pairs with the exchange in FinalAwaiter::await_suspend().
        return !resume_claimed_.exchange(true, std::memory_order_acq_rel);
    }

  protected:
    void rethrow_if_failed() const {
        if (error_) {
            std::rethrow_exception(error_);
        }
    }

  private:
    std::coroutine_handle<> awaiter_;
    std::exception_ptr error_;
    /// Set by the first of `start` (once the task suspended or finished) and
    /// the final suspend; the second resumes the awaiter or, in `start`,
    /// tells it not to suspend.
    std::atomic<bool> resume_claimed_{false};
};

template <typename T>
class TaskPromise final : public TaskPromiseBase {
  public:
    Task<T> get_return_object() noexcept;

    template <typename Value = T>
        requires std::convertible_to<Value&&, T>
    void return_value(Value&& value) {
        value_.emplace(std::forward<Value>(value));
    }

    /// The value, or the exception rethrown.
    T take_result() {
        rethrow_if_failed();
        return std::move(*value_);
    }

  private:
    std::optional<T> value_;
};

template <>
class TaskPromise<void> final : public TaskPromiseBase {
  public:
    Task<void> get_return_object() noexcept;
    void return_void() const noexcept {}
    /// Rethrows the exception, if any.
    void take_result() const { rethrow_if_failed(); }
};

/// Whether `R` is some `Task<U>`.
template <typename R>
inline constexpr bool is_task = false;
template <typename U>
inline constexpr bool is_task<Task<U>> = true;

/// What a function returning `R` produces once awaited: `U` for `Task<U>`,
/// `R` itself otherwise.
template <typename R>
struct Awaited {
    using type = R;
};
template <typename U>
struct Awaited<Task<U>> {
    using type = U;
};
template <typename R>
using awaited_t = typename Awaited<std::remove_cvref_t<R>>::type;

}  // namespace detail

/// A lazy coroutine: it starts when awaited, runs on the awaiting thread
/// until it first suspends, and resumes its awaiter with its `co_return`
/// value, or rethrows its exception there.
///
/// A task that finishes on another thread (after `co_await
/// executor.schedule()`, say) resumes its awaiter on that thread by
/// symmetric transfer, if the awaiter has suspended by then. If it finishes
/// first (the other thread won the race), the awaiter carries on where it
/// was: code after a `co_await` of a task that hops executors runs on
/// either thread, and must `co_await executor.schedule()` to be sure. A
/// chain of any length of tasks that finish synchronously does not grow the
/// stack (see `detail::TaskPromiseBase`).
///
/// Cancellation is cooperative and explicit: a task that should stop early
/// takes a `std::stop_token` and passes it to what it awaits
/// (`Executor::sleep_for`, `Channel`, `Semaphore`, `Event` all accept one).
///
/// Ownership: the `Task` owns the coroutine frame and destroys it.
/// Requires: a task is awaited at most once and is not destroyed while it
/// runs (between the start of the await and the resumption of its awaiter).
/// Thread safety: externally synchronized.
template <typename T>
class [[nodiscard]] Task {
  public:
    using promise_type = detail::TaskPromise<T>;
    using value_type = T;

    /// An empty task; it must not be awaited.
    Task() noexcept = default;
    Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
    Task& operator=(Task&& other) noexcept {
        if (this != &other) {
            reset();
            handle_ = std::exchange(other.handle_, {});
        }
        return *this;
    }
    ~Task() { reset(); }

    /// Whether the task holds a coroutine (it is not empty or moved from).
    [[nodiscard]] bool valid() const noexcept { return static_cast<bool>(handle_); }

    /// Starts the task when awaited and yields its result.
    class Awaiter {
      public:
        explicit Awaiter(std::coroutine_handle<promise_type> task) noexcept : task_(task) {}
        [[nodiscard]] bool await_ready() const noexcept { return false; }
        bool await_suspend(std::coroutine_handle<> awaiter) noexcept {
            SPILLWAY_ASSERT(task_ && !task_.done(), "awaiting an empty or finished Task");
            return task_.promise().start(task_, awaiter);
        }
        /// @throws whatever the task threw.
        T await_resume() { return task_.promise().take_result(); }

      private:
        std::coroutine_handle<promise_type> task_;
    };

    Awaiter operator co_await() & noexcept { return Awaiter(handle_); }
    Awaiter operator co_await() && noexcept { return Awaiter(handle_); }

  private:
    friend promise_type;
    explicit Task(std::coroutine_handle<promise_type> handle) noexcept : handle_(handle) {}

    void reset() noexcept {
        if (handle_) {
            std::exchange(handle_, {}).destroy();
        }
    }

    std::coroutine_handle<promise_type> handle_;
};

namespace detail {

template <typename T>
Task<T> TaskPromise<T>::get_return_object() noexcept {
    return Task<T>(std::coroutine_handle<TaskPromise>::from_promise(*this));
}

inline Task<void> TaskPromise<void>::get_return_object() noexcept {
    return Task<void>(std::coroutine_handle<TaskPromise>::from_promise(*this));
}

}  // namespace detail
}  // namespace spillway::exec
