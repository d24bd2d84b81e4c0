#include <spillway/exec/task_group.hpp>
#include <spillway/exec/thread_pool.hpp>

#include <common/rendezvous.hpp>
#include <common/watchdog.hpp>

#include "deterministic_executor.hpp"

#include <atomic>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::exec;
using namespace std::chrono_literals;

TEST(TaskGroup, RunsSpawnedFunctionsConcurrently) {
    ThreadPool pool(ThreadPool::Config{2});
    test::Rendezvous both(2);
    std::atomic<int> met{0};
    TaskGroup group(pool);
    for (int i = 0; i < 2; ++i) {
        group.spawn([&](std::stop_token const&) { met += both.arrive_and_wait() ? 1 : 0; });
    }
    group.wait();
    EXPECT_EQ(met.load(), 2);
}

TEST(TaskGroup, TheFirstExceptionStopsTheOthersAndWaitRethrowsIt) {
    test::Watchdog watchdog("a task group whose sleepers should be stopped");
    ThreadPool pool(ThreadPool::Config{2});
    std::atomic<int> started{0};
    std::atomic<int> cut_short{0};
    TaskGroup group(pool);
    for (int i = 0; i < 4; ++i) {
        group.spawn([&](std::stop_token const& stop) -> Task<void> {
            ++started;
            if (!co_await pool.sleep_for(std::chrono::hours(1), stop)) {
                ++cut_short;
            }
        });
    }
    group.spawn([](std::stop_token const&) { throw std::runtime_error("first"); });
    // The sleepers would take an hour: wait() returns because the exception
    // stopped the ones that had started, and the others never started.
    EXPECT_THROW(group.wait(), std::runtime_error);
    EXPECT_EQ(cut_short.load(), started.load());
    // Reported once.
    EXPECT_NO_THROW(group.wait());
}

TEST(TaskGroup, FunctionsSpawnedAfterAStopNeverStart) {
    test::RandomChooser chooser(1);
    test::DeterministicExecutor executor(chooser);
    bool started = false;
    TaskGroup group(executor);
    group.request_stop();
    group.spawn([&](std::stop_token const&) { started = true; });
    group.wait();
    EXPECT_FALSE(started);
    EXPECT_TRUE(group.stop_token().stop_requested());
}

TEST(TaskGroup, SpawnedFunctionsMaySpawnMore) {
    test::RandomChooser chooser(2);
    test::DeterministicExecutor executor(chooser);
    int ran = 0;
    TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) {
        ++ran;
        group.spawn([&](std::stop_token const&) { ++ran; });
    });
    group.wait();
    EXPECT_EQ(ran, 2);
}

// A function still running after the group's destructor would be counted
// in `running`, and under ASan would also write freed memory. Each function
// writes its own element, so the functions do not race with each other.
TEST(TaskGroup, DestructionStopsAndWaitsSoBorrowedDataMayBeFreedRightAfter) {
    test::Watchdog watchdog("a task group's destructor");
    ThreadPool pool(ThreadPool::Config{2});
    constexpr std::size_t functions = 16;
    auto borrowed = std::make_unique<std::vector<int>>(functions, 1);
    std::atomic<int> running{0};
    {
        TaskGroup group(pool);
        for (std::size_t i = 0; i < functions; ++i) {
            group.spawn([&element = (*borrowed)[i], &pool, &running](std::stop_token const& stop) -> Task<void> {
                ++running;
                co_await pool.sleep_for(std::chrono::hours(1), stop);
                co_await pool.schedule();
                element += 1;
                --running;
            });
        }
    }
    EXPECT_EQ(running.load(), 0) << "a function outlived the group";
    borrowed.reset();
}
