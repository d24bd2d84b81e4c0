#include <spillway/exec/event.hpp>
#include <spillway/exec/task_group.hpp>
#include <spillway/exec/thread_pool.hpp>

#include "deterministic_executor.hpp"

#include <atomic>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::exec;

TEST(Event, WaitersResumeWhenItIsSetAndNotBefore) {
    test::RandomChooser chooser(1);
    test::DeterministicExecutor executor(chooser);
    Event event(executor);
    std::vector<bool> results;
    TaskGroup group(executor);
    for (int i = 0; i < 3; ++i) {
        group.spawn([&](std::stop_token const&) -> Task<void> { results.push_back(co_await event.wait()); });
    }
    executor.run_until_idle();
    EXPECT_TRUE(results.empty());
    EXPECT_FALSE(event.is_set());
    event.set();
    executor.run_until_idle();
    EXPECT_EQ(results, std::vector<bool>(3, true));
    group.wait();
}

TEST(Event, AWaitAfterSetCompletesWithoutSuspending) {
    test::RandomChooser chooser(2);
    test::DeterministicExecutor executor(chooser);
    Event event(executor);
    event.set();
    event.set();
    bool result = false;
    TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> Task<void> { result = co_await event.wait(); });
    group.wait();
    EXPECT_TRUE(result);
}

TEST(Event, AStopRequestEndsTheWaitWithFalse) {
    test::RandomChooser chooser(3);
    test::DeterministicExecutor executor(chooser);
    Event event(executor);
    std::stop_source stop;
    std::vector<bool> results;
    TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> Task<void> { results.push_back(co_await event.wait(stop.get_token())); });
    executor.run_until_idle();
    stop.request_stop();
    executor.run_until_idle();
    EXPECT_EQ(results, std::vector<bool>{false});
    // The cancelled waiter left the event: setting it now resumes nobody.
    event.set();
    EXPECT_TRUE(executor.idle());
    group.wait();
}

TEST(Event, AStopRequestedBeforeTheWaitEndsItWithFalseEvenIfTheEventIsSet) {
    test::RandomChooser chooser(4);
    test::DeterministicExecutor executor(chooser);
    Event event(executor);
    event.set();
    std::stop_source stop;
    stop.request_stop();
    std::optional<bool> stopped;
    std::optional<bool> unstopped;
    TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> Task<void> { stopped = co_await event.wait(stop.get_token()); });
    group.spawn([&](std::stop_token const&) -> Task<void> { unstopped = co_await event.wait(); });
    executor.run_until_idle();
    group.wait();
    EXPECT_EQ(stopped, false);
    EXPECT_EQ(unstopped, true);
}

TEST(Event, WritesBeforeSetAreVisibleToEveryWaiterOnOtherThreads) {
    ThreadPool pool(ThreadPool::Config{4});
    for (int round = 0; round < 50; ++round) {
        Event event(pool);
        int payload = 0;
        std::atomic<int> seen{0};
        TaskGroup group(pool);
        for (int i = 0; i < 8; ++i) {
            group.spawn([&](std::stop_token const&) -> Task<void> {
                co_await event.wait();
                seen += payload;
            });
        }
        payload = round;
        event.set();
        group.wait();
        EXPECT_EQ(seen.load(), 8 * round);
    }
}
