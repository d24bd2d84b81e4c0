#pragma once
/// @file
/// `Detached`: the coroutine exec/ uses to drive a task to its end without
/// an awaiter, then report that it is done.

#include <coroutine>
#include <optional>
#include <utility>

#include <spillway/core/error.hpp>

namespace spillway::exec::detail {

/// A coroutine that runs on its own once started. When its body ends it
/// destroys its frame first and only then calls its `Done`, so whoever
/// waits for `Done` knows that nothing of the coroutine - none of its locals,
/// none of the tasks it awaited - is left.
///
/// `Done` is a `noexcept` callable. The body must catch every exception it
/// can throw; one that escapes aborts.
template <typename Done>
class [[nodiscard]] Detached {
  public:
    class promise_type {
      public:
        Detached get_return_object() noexcept {
            return Detached(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        [[nodiscard]] std::suspend_always initial_suspend() const noexcept { return {}; }

        /// Destroys the frame, then calls `Done`.
        class FinalAwaiter {
          public:
            [[nodiscard]] bool await_ready() const noexcept { return false; }
            void await_suspend(std::coroutine_handle<promise_type> self) const noexcept {
                Done done = std::move(*self.promise().done_);
                self.destroy();
                done();
            }
            void await_resume() const noexcept {}
        };
        [[nodiscard]] FinalAwaiter final_suspend() const noexcept { return {}; }

        void return_void() const noexcept {}
        void unhandled_exception() const noexcept {
            SPILLWAY_FATAL("an exception escaped a detached coroutine of exec/");
        }

      private:
        friend Detached;
        std::optional<Done> done_;
    };

    Detached(Detached&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
    Detached& operator=(Detached&&) = delete;
    /// Destroys a coroutine that was never started.
    ~Detached() {
        if (handle_) {
            handle_.destroy();
        }
    }

    /// Runs the coroutine on the calling thread until it first suspends; it
    /// calls `done` when it has finished. Consumes the handle.
    void start(Done done) && noexcept {
        auto const handle = std::exchange(handle_, {});
        handle.promise().done_.emplace(std::move(done));
        handle.resume();
    }

  private:
    explicit Detached(std::coroutine_handle<promise_type> handle) noexcept : handle_(handle) {}

    std::coroutine_handle<promise_type> handle_;
};

}  // namespace spillway::exec::detail
