#pragma once
/// @file
/// The `Executor` interface every scheduler in exec/ implements, the
/// intrusive `Work` items it runs, and the awaitables that move a coroutine
/// onto an executor (`schedule()`) or park it on a timer (`sleep_for()`).

#include <atomic>
#include <chrono>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <optional>
#include <stop_token>

#include <spillway/exec/notification.hpp>

namespace spillway::exec {

namespace detail {
/// `std::uncaught_exceptions()` on this thread when the `Work` it is running
/// began; -1 outside any work.
inline thread_local int uncaught_when_work_began = -1;
}  // namespace detail

/// One piece of work an executor runs once. Intrusive: the owner embeds it
/// (typically in a coroutine frame or a join's state), so posting allocates
/// nothing.
///
/// Lifetime: the owner keeps a posted `Work` alive and unmoved until its
/// function starts; the function may destroy it.
class Work {
  public:
    /// What running the work does. It must not throw: a work item reports
    /// failures through its owner.
    using Function = void (*)(Work&) noexcept;

    explicit Work(Function function) noexcept : function_(function) {}
    Work(Work const&) = delete;
    Work& operator=(Work const&) = delete;

    /// Calls the function. Executors call this exactly once per post.
    void run() noexcept {
        auto const outer = detail::uncaught_when_work_began;
        detail::uncaught_when_work_began = std::uncaught_exceptions();
        function_(*this);
        detail::uncaught_when_work_began = outer;
    }

    /// Link for the queue of the executor holding this work; nobody else
    /// touches it.
    Work* next = nullptr;

  protected:
    ~Work() = default;

  private:
    Function function_;
};

/// Whether the calling thread is unwinding an exception thrown since the
/// `Work` it is running began (`std::uncaught_exceptions()` is above its
/// count then), or, outside any work, since it counted `outside_work`
/// uncaught exceptions. For scope guards in coroutines: an executor may
/// resume a coroutine on another thread than the one that made the guard,
/// whose count of exceptions in flight may differ.
[[nodiscard]] inline bool unwinding_since_work_began(int outside_work) noexcept {
    auto const began = detail::uncaught_when_work_began;
    return std::uncaught_exceptions() > (began >= 0 ? began : outside_work);
}

/// A `Work` that an executor runs no earlier than a deadline.
class TimedWork : public Work {
  public:
    using Work::Work;

    /// When it becomes due, on the clock of the executor it was posted to;
    /// written by that executor while the work is pending.
    std::chrono::steady_clock::time_point deadline;

  protected:
    ~TimedWork() = default;
};

class ScheduleAwaiter;
class SleepAwaiter;

/// Runs `Work` on a set of threads. `ThreadPool` is the production
/// implementation; tests substitute a deterministic one whose run order a
/// seed chooses.
///
/// Contract for implementations:
/// - `post` and `post_after` only queue: they never run work or user code on
///   the caller's thread, and they may be called with the caller's own locks
///   held (every lock in exec/ is ordered before an executor's locks).
/// - `wait` may run queued work on the calling thread while it waits, so a
///   thread of the executor that waits for other work never deadlocks it.
///
/// Thread safety: every member function may be called concurrently.
class Executor {
  public:
    Executor() = default;
    Executor(Executor const&) = delete;
    Executor& operator=(Executor const&) = delete;
    virtual ~Executor() = default;

    /// Queues `work` to run soon on one of the executor's threads.
    /// Requires: `work` is not queued already.
    virtual void post(Work& work) noexcept = 0;

    /// Queues `work` to run once `delay` has passed. Requires: `work` is not
    /// pending already.
    /// @throws std::bad_alloc if the timer cannot be recorded.
    virtual void post_after(TimedWork& work, std::chrono::nanoseconds delay) = 0;

    /// Takes `work`, posted with `post_after`, out of the pending timers.
    /// Returns true if it was pending, in which case it will not run; false
    /// if it was not pending (never posted, or already due and handed on to
    /// run).
    [[nodiscard]] virtual bool cancel(TimedWork& work) noexcept = 0;

    /// Blocks the calling thread until `notification` is set, running queued
    /// work on it meanwhile. Returns once the notification is set; the caller
    /// may then destroy it.
    virtual void wait(Notification& notification) = 0;

    /// How many threads run work; joins start at most this many runners.
    [[nodiscard]] virtual std::size_t concurrency() const noexcept = 0;

    /// An awaitable that suspends the awaiting coroutine and resumes it on
    /// one of this executor's threads: `co_await executor.schedule();`.
    [[nodiscard]] ScheduleAwaiter schedule() noexcept;

    /// An awaitable that suspends the awaiting coroutine for `duration`
    /// without holding a thread, then resumes it on this executor. It
    /// resumes early if `stop` is requested. `co_await` yields true if the
    /// full duration passed, false if the sleep was cut short by `stop`.
    [[nodiscard]] SleepAwaiter sleep_for(
        std::chrono::nanoseconds duration, std::stop_token stop = {}
    ) noexcept;

    /// The executor whose work the calling thread is running, or null when
    /// it runs none (a thread outside every executor).
    [[nodiscard]] static Executor* current() noexcept;

  protected:
    /// Marks the calling thread as running `executor`'s work (see
    /// `current()`) for the lifetime of the scope; nests.
    class CurrentScope {
      public:
        explicit CurrentScope(Executor& executor) noexcept;
        ~CurrentScope();
        CurrentScope(CurrentScope const&) = delete;
        CurrentScope& operator=(CurrentScope const&) = delete;

      private:
        Executor* previous_;
    };
};

/// Awaitable returned by `Executor::schedule()`.
class ScheduleAwaiter : private Work {
  public:
    explicit ScheduleAwaiter(Executor& executor) noexcept : Work(&resume), executor_(executor) {}

    [[nodiscard]] bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> handle) noexcept {
        handle_ = handle;
        executor_.post(*this);
    }
    void await_resume() const noexcept {}

  private:
    static void resume(Work& work) noexcept { static_cast<ScheduleAwaiter&>(work).handle_.resume(); }

    Executor& executor_;
    std::coroutine_handle<> handle_;
};

/// Awaitable returned by `Executor::sleep_for()`.
///
/// The timer and a stop request race to resume the coroutine; whichever
/// takes the timer out of the executor (the timer firing, or `cancel`)
/// decides the result, and a handshake on `resumed_` keeps the coroutine
/// suspended until `await_suspend` no longer touches the awaiter.
class SleepAwaiter : private TimedWork {
  public:
    SleepAwaiter(Executor& executor, std::chrono::nanoseconds duration, std::stop_token stop) noexcept
        : TimedWork(&on_due), executor_(executor), duration_(duration), stop_(std::move(stop)) {}

    /// Completes at once for a duration that is not positive or a stop that
    /// was already requested.
    [[nodiscard]] bool await_ready() noexcept {
        elapsed_ = !stop_.stop_requested();
        return duration_ <= std::chrono::nanoseconds::zero() || !elapsed_;
    }
    bool await_suspend(std::coroutine_handle<> handle);
    /// True if the full duration passed, false if a stop request cut it short.
    bool await_resume() noexcept {
        on_stop_.reset();
        return elapsed_ || duration_ <= std::chrono::nanoseconds::zero();
    }

  private:
    struct CutShort {
        SleepAwaiter* sleeper;
        void operator()() const noexcept;
    };

    static void on_due(Work& work) noexcept;

    Executor& executor_;
    std::chrono::nanoseconds const duration_;
    std::stop_token const stop_;
    std::coroutine_handle<> handle_;
    /// False once a stop request has cut the sleep short; written before the
    /// coroutine resumes, by whoever took the timer out of the executor.
    bool elapsed_ = true;
    /// Set by the first of `await_suspend` (when done with the awaiter) and
    /// the due timer; the second one resumes the coroutine.
    std::atomic<bool> resumed_{false};
    std::optional<std::stop_callback<CutShort>> on_stop_;
};

inline ScheduleAwaiter Executor::schedule() noexcept { return ScheduleAwaiter(*this); }

inline SleepAwaiter Executor::sleep_for(std::chrono::nanoseconds duration, std::stop_token stop) noexcept {
    return SleepAwaiter(*this, duration, std::move(stop));
}

}  // namespace spillway::exec
