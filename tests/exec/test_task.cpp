#include <spillway/exec/sync_wait.hpp>
#include <spillway/exec/task.hpp>
#include <spillway/exec/thread_pool.hpp>

#include <common/rendezvous.hpp>
#include <common/watchdog.hpp>

#include <coroutine>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::exec;

namespace {

Task<int> answer() { co_return 42; }

Task<int> twice(Task<int> inner) { co_return 2 * co_await std::move(inner); }

Task<void> fail_with(std::string message) {
    throw std::runtime_error(message);
    co_return;
}

Task<std::unique_ptr<int>> boxed(int value) { co_return std::make_unique<int>(value); }

Task<int> immediately(int value) { co_return value; }

}  // namespace

TEST(Task, YieldsItsValueToTheAwaiter) { EXPECT_EQ(sync_wait(twice(answer())), 84); }

TEST(Task, DoesNotStartUntilAwaited) {
    bool started = false;
    auto task = [](bool& flag) -> Task<void> {
        flag = true;
        co_return;
    }(started);
    EXPECT_FALSE(started);
    sync_wait(std::move(task));
    EXPECT_TRUE(started);
}

TEST(Task, RethrowsItsExceptionInTheAwaiter) {
    auto awaiter = []() -> Task<std::string> {
        try {
            co_await fail_with("boom");
        } catch (std::runtime_error const& error) {
            co_return error.what();
        }
        co_return "no exception";
    };
    EXPECT_EQ(sync_wait(awaiter()), "boom");
    EXPECT_THROW(sync_wait(fail_with("again")), std::runtime_error);
}

TEST(Task, MovesMoveOnlyResults) { EXPECT_EQ(*sync_wait(boxed(7)), 7); }

TEST(Task, MovedFromTaskIsEmpty) {
    Task<int> first = answer();
    Task<int> second = std::move(first);
    EXPECT_FALSE(first.valid());  // NOLINT(bugprone-use-after-move): checking the moved-from state
    EXPECT_TRUE(second.valid());
    EXPECT_EQ(sync_wait(std::move(second)), 42);
}

// Without symmetric transfer, or with a symmetric transfer that the compiler
// does not turn into a tail call (g++ 12 below -O2 and under ASan), each of
// these awaits would nest two stack frames, and a million overflow the stack.
TEST(Task, AMillionAwaitsInALoopDoNotGrowTheStack) {
    auto loop = []() -> Task<long> {
        long sum = 0;
        for (int i = 0; i < 1'000'000; ++i) {
            sum += co_await immediately(i % 3);
        }
        co_return sum;
    };
    EXPECT_EQ(sync_wait(loop()), 999'999);
}

TEST(Task, ScheduleResumesOnAThreadOfTheExecutor) {
    ThreadPool pool(ThreadPool::Config{2});
    auto hop = [](ThreadPool& target) -> Task<Executor*> {
        co_await target.schedule();
        co_return Executor::current();
    };
    EXPECT_EQ(Executor::current(), nullptr);
    EXPECT_EQ(sync_wait(hop(pool)), &pool);
}

// The awaiter must have suspended before the task finishes elsewhere: the
// outer task runs on `first`'s only thread, and the inner task's hop back to
// that thread is queued behind the outer's run, so it leaves for `second`
// only after the outer has suspended.
TEST(Task, ResumesTheAwaiterOnTheThreadWhereTheTaskFinished) {
    ThreadPool first(ThreadPool::Config{1});
    ThreadPool second(ThreadPool::Config{1});
    auto inner = [&]() -> Task<std::thread::id> {
        co_await first.schedule();
        co_await second.schedule();
        co_return std::this_thread::get_id();
    };
    auto outer = [&]() -> Task<bool> {
        co_await first.schedule();
        std::thread::id const started_on = std::this_thread::get_id();
        std::thread::id const finished_on = co_await inner();
        co_return finished_on != started_on && finished_on == std::this_thread::get_id();
    };
    EXPECT_TRUE(sync_wait(outer()));
}

// Resumes the awaiting coroutine on a thread of its own and returns only
// once that thread has run it to its next suspension.
struct ResumeOnAnotherThreadAndWait {
    [[nodiscard]] bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> handle) const {
        std::thread([handle] { handle.resume(); }).join();
    }
    void await_resume() const noexcept {}
};

// A task that finishes on another thread before its awaiter has suspended
// lets the awaiter carry on where it was (see Task's class comment).
TEST(Task, AnAwaiterThatHasNotSuspendedWhenTheTaskFinishesCarriesOnWhereItWas) {
    std::thread::id finished_on;
    auto inner = [&]() -> Task<void> {
        co_await ResumeOnAnotherThreadAndWait{};
        finished_on = std::this_thread::get_id();
    };
    auto outer = [&]() -> Task<std::thread::id> {
        co_await inner();
        co_return std::this_thread::get_id();
    };
    EXPECT_EQ(sync_wait(outer()), std::this_thread::get_id());
    EXPECT_NE(finished_on, std::this_thread::get_id());
}

TEST(SyncWait, OnAThreadOfTheExecutorRunsQueuedWorkInsteadOfDeadlocking) {
    test::Watchdog watchdog("a nested sync_wait on a one-thread pool");
    ThreadPool pool(ThreadPool::Config{1});
    auto nested = [](ThreadPool& target) -> Task<int> {
        co_await target.schedule();
        // The pool's only thread blocks here on a task that needs that
        // thread: only running queued work while waiting lets it finish.
        co_return sync_wait([](ThreadPool& again) -> Task<int> {
            co_await again.schedule();
            co_return 5;
        }(target));
    };
    EXPECT_EQ(sync_wait(pool, nested(pool)), 5);
}
