#include <spillway/exec/semaphore.hpp>
#include <spillway/exec/task_group.hpp>
#include <spillway/exec/thread_pool.hpp>

#include <common/concurrency_tracker.hpp>

#include "deterministic_executor.hpp"

#include <vector>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::exec;

TEST(Semaphore, HandsPermitsToWaitersInArrivalOrder) {
    test::RandomChooser chooser(1);
    test::DeterministicExecutor executor(chooser, 1);
    Semaphore semaphore(executor, 2);
    std::vector<int> acquired;
    TaskGroup group(executor);
    for (int i = 0; i < 5; ++i) {
        group.spawn([&, i](std::stop_token const&) -> Task<void> {
            if (co_await semaphore.acquire()) {
                acquired.push_back(i);
            }
        });
        executor.run_until_idle();
    }
    EXPECT_EQ(acquired, (std::vector<int>{0, 1}));
    EXPECT_EQ(semaphore.available(), 0u);
    EXPECT_FALSE(semaphore.try_acquire());
    semaphore.release();
    executor.run_until_idle();
    EXPECT_EQ(acquired, (std::vector<int>{0, 1, 2}));
    semaphore.release(2);
    executor.run_until_idle();
    EXPECT_EQ(acquired, (std::vector<int>{0, 1, 2, 3, 4}));
    group.wait();
}

TEST(Semaphore, ACancelledAcquireTakesNoPermit) {
    test::RandomChooser chooser(2);
    test::DeterministicExecutor executor(chooser);
    Semaphore semaphore(executor, 0);
    std::stop_source stop;
    std::vector<bool> results;
    TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> Task<void> {
        results.push_back(co_await semaphore.acquire(stop.get_token()));
    });
    group.spawn([&](std::stop_token const&) -> Task<void> { results.push_back(co_await semaphore.acquire()); });
    executor.run_until_idle();
    stop.request_stop();
    executor.run_until_idle();
    EXPECT_EQ(results, std::vector<bool>{false});
    semaphore.release();
    executor.run_until_idle();
    EXPECT_EQ(results, (std::vector<bool>{false, true}));
    EXPECT_EQ(semaphore.available(), 0u);
    group.wait();
}

TEST(Semaphore, BoundsConcurrencyToItsPermitsAndReachesThem) {
    ThreadPool pool(ThreadPool::Config{4});
    Semaphore semaphore(pool, 3);
    test::ConcurrencyTracker holders;
    TaskGroup group(pool);
    for (int i = 0; i < 64; ++i) {
        group.spawn([&](std::stop_token const&) -> Task<void> {
            co_await semaphore.acquire();
            {
                test::ConcurrencyTracker::Scope holding(holders);
                // Hold the permit across suspensions until three holders met.
                while (holders.peak() < 3) {
                    co_await pool.schedule();
                }
            }
            semaphore.release();
        });
    }
    group.wait();
    EXPECT_EQ(holders.peak(), 3u);
    EXPECT_EQ(semaphore.available(), 3u);
}

TEST(Semaphore, PermitsAreConservedWhenStopRacesWithRelease) {
    ThreadPool pool(ThreadPool::Config{3});
    for (int round = 0; round < 100; ++round) {
        Semaphore semaphore(pool, 0);
        std::stop_source stop;
        std::atomic<int> acquired{0};
        {
            TaskGroup group(pool);
            for (int i = 0; i < 4; ++i) {
                group.spawn([&](std::stop_token const&) -> Task<void> {
                    if (co_await semaphore.acquire(stop.get_token())) {
                        ++acquired;
                    }
                });
            }
            group.spawn([&](std::stop_token const&) { semaphore.release(2); });
            group.spawn([&](std::stop_token const&) { stop.request_stop(); });
            group.wait();
        }
        EXPECT_EQ(static_cast<std::size_t>(acquired.load()) + semaphore.available(), 2u);
    }
}
