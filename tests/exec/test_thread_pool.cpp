#include <spillway/core/error.hpp>
#include <spillway/exec/sync_wait.hpp>
#include <spillway/exec/task_group.hpp>
#include <spillway/exec/thread_pool.hpp>

#include <common/error_matchers.hpp>
#include <common/rendezvous.hpp>
#include <common/watchdog.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::exec;
using namespace std::chrono_literals;

namespace {

/// A work item that runs a function.
template <typename Fn>
class FunctionWork final : public TimedWork {
  public:
    explicit FunctionWork(Fn fn) : TimedWork(&run), fn_(std::move(fn)) {}

  private:
    static void run(Work& work) noexcept { static_cast<FunctionWork&>(work).fn_(); }
    Fn fn_;
};

}  // namespace

TEST(ThreadPool, RunsPostedWorkOnSeveralThreadsAtOnce) {
    ThreadPool pool(ThreadPool::Config{3});
    test::Rendezvous all_inside(3);
    std::atomic<int> met{0};
    Notification done[3];
    auto make = [&](int i) {
        return FunctionWork([&, i] {
            met += all_inside.arrive_and_wait() ? 1 : 0;
            done[i].notify();
        });
    };
    FunctionWork first = make(0);
    FunctionWork second = make(1);
    FunctionWork third = make(2);
    pool.post(first);
    pool.post(second);
    pool.post(third);
    for (auto& notification : done) {
        notification.wait();
    }
    EXPECT_EQ(met.load(), 3);
    EXPECT_EQ(pool.concurrency(), 3u);
}

TEST(ThreadPool, AWaitingThreadRunsQueuedWork) {
    // The pool's one worker is held at a rendezvous, so the work that sets
    // the notification can only run on the thread that waits for it. The
    // rendezvous outlives the pool, whose worker may still be leaving it.
    test::Rendezvous release_worker(2);
    ThreadPool pool(ThreadPool::Config{1});
    Notification holding;
    FunctionWork hold([&] {
        holding.notify();
        release_worker.arrive_and_wait();
    });
    pool.post(hold);
    holding.wait();
    Notification notified;
    std::thread::id ran_on;
    FunctionWork notify([&] {
        ran_on = std::this_thread::get_id();
        notified.notify();
    });
    pool.post(notify);
    pool.wait(notified);
    EXPECT_EQ(ran_on, std::this_thread::get_id());
    release_worker.arrive_and_wait();
}

TEST(ThreadPool, WorkPostedAsAWaitEndsRunsOnAnotherThread) {
    // A post wakes the thread that went idle last. When that is a thread in
    // wait() whose notification comes at the same moment, it leaves without
    // the work, which must still run: the post's wake-up is passed on.
    ThreadPool pool(ThreadPool::Config{1});
    test::Watchdog watchdog("work posted as a wait ended never ran", std::chrono::seconds(60));
    for (int round = 0; round < 20; ++round) {
        std::this_thread::sleep_for(10ms);  // the worker goes idle
        Notification done;
        std::thread waiter([&] { pool.wait(done); });
        std::this_thread::sleep_for(10ms);  // the waiter goes idle, after the worker
        Notification ran;
        FunctionWork work([&] { ran.notify(); });
        done.notify();
        pool.post(work);
        waiter.join();
        ran.wait();
    }
}

TEST(ThreadPool, ReadsTheThreadCountFromOptions) {
    EXPECT_EQ(ThreadPool::Config::from_options(Options().set("threads", "3")).threads, 3u);
    EXPECT_EQ(ThreadPool::Config::from_options(Options().set("threads", "0")).threads,
              ThreadPool::Config::default_threads());
    EXPECT_EQ(ThreadPool::Config::from_options(Options()).threads, ThreadPool::Config::default_threads());
    EXPECT_THROW_WITH(ThreadPool::Config::from_options(Options().set("threads", "many")), InvalidArgument,
                      "threads");
    EXPECT_THROW_WITH(ThreadPool(ThreadPool::Config{0}), InvalidArgument, "option `threads`");
}

TEST(ThreadPool, PostAfterRunsNoEarlierThanTheDelay) {
    ThreadPool pool(ThreadPool::Config{1});
    Notification ran;
    auto const start = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point ran_at;
    FunctionWork timer([&] {
        ran_at = std::chrono::steady_clock::now();
        ran.notify();
    });
    pool.post_after(timer, 20ms);
    ran.wait();
    EXPECT_GE(ran_at - start, 20ms);
}

// Regression: the timer thread was not woken for a timer scheduled while it
// slept with no timer pending, because `insert(...).first == begin()` read
// begin() before the insert.
TEST(ThreadPool, ATimerRepostedFromItsOwnRunFiresAgain) {
    test::Watchdog watchdog("a re-posted timer");
    ThreadPool pool(ThreadPool::Config{1});
    Notification done;
    int fired = 0;
    std::function<void()> fire;
    FunctionWork timer([&] { fire(); });
    fire = [&] {
        if (++fired < 3) {
            pool.post_after(timer, 1ms);
        } else {
            done.notify();
        }
    };
    pool.post_after(timer, 1ms);
    done.wait();
    EXPECT_EQ(fired, 3);
}

TEST(ThreadPool, AnEarlierTimerWakesTheTimerThread) {
    ThreadPool pool(ThreadPool::Config{1});
    Notification ran;
    FunctionWork late([] {});
    FunctionWork early([&] { ran.notify(); });
    pool.post_after(late, std::chrono::hours(1));
    pool.post_after(early, 1ms);
    test::Watchdog watchdog("an earlier timer behind a later one");
    ran.wait();
    EXPECT_TRUE(pool.cancel(late));
}

TEST(ThreadPool, CancelledTimerNeverRuns) {
    ThreadPool pool(ThreadPool::Config{1});
    bool ran = false;
    FunctionWork timer([&] { ran = true; });
    pool.post_after(timer, std::chrono::hours(1));
    EXPECT_TRUE(pool.cancel(timer));
    EXPECT_FALSE(pool.cancel(timer));
    EXPECT_FALSE(ran);
}

TEST(ThreadPoolDeathTest, DestroyingItWithAPendingTimerAborts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            ThreadPool pool(ThreadPool::Config{1});
            FunctionWork timer([] {});
            pool.post_after(timer, std::chrono::hours(1));
        },
        "timers are pending");
}

TEST(SleepFor, SleepingCoroutinesHoldNoThread) {
    test::Watchdog watchdog("sleepers on a one-thread pool");
    ThreadPool pool(ThreadPool::Config{1});
    std::stop_source stop;
    std::atomic<int> cut_short{0};
    {
        TaskGroup sleepers(pool);
        for (int i = 0; i < 100; ++i) {
            sleepers.spawn([&](std::stop_token const&) -> Task<void> {
                if (!co_await pool.sleep_for(std::chrono::hours(1), stop.get_token())) {
                    ++cut_short;
                }
            });
        }
        // With a hundred coroutines asleep on it, the pool's one thread is
        // still free to run this.
        EXPECT_EQ(sync_wait(pool, [](ThreadPool& target) -> Task<int> {
                      co_await target.schedule();
                      co_return 1;
                  }(pool)),
                  1);
        stop.request_stop();
        sleepers.wait();
    }
    EXPECT_EQ(cut_short.load(), 100);
}

TEST(SleepFor, ReturnsTrueWhenTheFullDurationPassed) {
    ThreadPool pool(ThreadPool::Config{1});
    auto const start = std::chrono::steady_clock::now();
    EXPECT_TRUE(sync_wait(pool, [](ThreadPool& target) -> Task<bool> {
        co_return co_await target.sleep_for(10ms);
    }(pool)));
    EXPECT_GE(std::chrono::steady_clock::now() - start, 10ms);
}

TEST(SleepFor, TheLongestDurationSleepsUntilStopIsRequested) {
    ThreadPool pool(ThreadPool::Config{1});
    std::stop_source stop;
    std::atomic<int> woken{0};
    TaskGroup sleepers(pool);
    for (auto const duration : {std::chrono::nanoseconds::max(), std::chrono::nanoseconds::max() - 1ms}) {
        sleepers.spawn([&, duration](std::stop_token const&) -> Task<void> {
            EXPECT_FALSE(co_await pool.sleep_for(duration, stop.get_token())) << "a sleep past the clock's end";
            ++woken;
        });
    }
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(woken.load(), 0);
    stop.request_stop();
    sleepers.wait();
    EXPECT_EQ(woken.load(), 2);
}

TEST(SleepFor, ReturnsFalseAtOnceWhenStopWasAlreadyRequested) {
    ThreadPool pool(ThreadPool::Config{1});
    std::stop_source stop;
    stop.request_stop();
    EXPECT_FALSE(sync_wait(pool, [](ThreadPool& target, std::stop_token token) -> Task<bool> {
        co_return co_await target.sleep_for(std::chrono::hours(1), token);
    }(pool, stop.get_token())));
}
