#include <spillway/core/error.hpp>
#include <spillway/exec/channel.hpp>
#include <spillway/exec/task_group.hpp>
#include <spillway/exec/thread_pool.hpp>

#include <common/error_matchers.hpp>

#include "deterministic_executor.hpp"

#include <atomic>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::exec;

TEST(Channel, DeliversValuesInTheOrderTheyWereSent) {
    test::RandomChooser chooser(1);
    test::DeterministicExecutor executor(chooser);
    Channel<std::unique_ptr<int>> channel(executor, 2);
    std::vector<int> received;
    TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> Task<void> {
        for (int i = 0; i < 10; ++i) {
            EXPECT_TRUE(co_await channel.send(std::make_unique<int>(i)));
        }
        channel.close();
    });
    group.spawn([&](std::stop_token const&) -> Task<void> {
        while (std::optional<std::unique_ptr<int>> value = co_await channel.receive()) {
            received.push_back(**value);
        }
    });
    group.wait();
    std::vector<int> expected(10);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(received, expected);
}

TEST(Channel, ASendSuspendsWhileTheChannelIsFull) {
    test::RandomChooser chooser(2);
    test::DeterministicExecutor executor(chooser);
    Channel<int> channel(executor, 2);
    int sent = 0;
    TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> Task<void> {
        for (int i = 0; i < 5; ++i) {
            co_await channel.send(i);
            ++sent;
        }
    });
    executor.run_until_idle();
    EXPECT_EQ(sent, 2);
    EXPECT_EQ(channel.size(), 2u);
    EXPECT_EQ(channel.try_receive(), 0);
    executor.run_until_idle();
    EXPECT_EQ(sent, 3);
    EXPECT_EQ(channel.try_receive(), 1);
    EXPECT_EQ(channel.try_receive(), 2);
    executor.run_until_idle();
    EXPECT_EQ(sent, 5);
    group.wait();
}

TEST(Channel, CloseWakesSendersWithFalseAndReceiversAfterTheyDrainIt) {
    test::RandomChooser chooser(3);
    test::DeterministicExecutor executor(chooser);
    Channel<int> full(executor, 1);
    Channel<int> empty(executor, 1);
    int value = 7;
    ASSERT_TRUE(full.try_send(value));
    EXPECT_FALSE(full.try_send(value));
    EXPECT_EQ(value, 7);
    std::vector<bool> sends;
    std::vector<std::optional<int>> receives;
    TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> Task<void> { sends.push_back(co_await full.send(8)); });
    group.spawn([&](std::stop_token const&) -> Task<void> { receives.push_back(co_await empty.receive()); });
    executor.run_until_idle();
    EXPECT_TRUE(sends.empty());
    EXPECT_TRUE(receives.empty());
    full.close();
    empty.close();
    executor.run_until_idle();
    EXPECT_EQ(sends, std::vector<bool>{false});
    EXPECT_EQ(receives, std::vector<std::optional<int>>{std::nullopt});
    // What was buffered before the close is still delivered.
    group.spawn([&](std::stop_token const&) -> Task<void> {
        receives.push_back(co_await full.receive());
        receives.push_back(co_await full.receive());
        sends.push_back(co_await full.send(9));
    });
    group.wait();
    EXPECT_EQ(receives, (std::vector<std::optional<int>>{std::nullopt, 7, std::nullopt}));
    EXPECT_EQ(sends, (std::vector<bool>{false, false}));
    EXPECT_TRUE(full.closed());
}

TEST(Channel, AStopRequestEndsAWaitingSendOrReceive) {
    test::RandomChooser chooser(4);
    test::DeterministicExecutor executor(chooser);
    Channel<int> channel(executor, 1);
    int value = 1;
    ASSERT_TRUE(channel.try_send(value));
    Channel<int> empty(executor, 1);
    std::stop_source stop;
    std::optional<bool> sent;
    std::optional<std::optional<int>> received;
    TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> Task<void> { sent = co_await channel.send(2, stop.get_token()); });
    group.spawn([&](std::stop_token const&) -> Task<void> { received = co_await empty.receive(stop.get_token()); });
    executor.run_until_idle();
    EXPECT_FALSE(sent.has_value());
    stop.request_stop();
    group.wait();
    EXPECT_EQ(sent, false);
    ASSERT_TRUE(received.has_value());
    EXPECT_FALSE(received->has_value());
    EXPECT_EQ(channel.size(), 1u);
}

TEST(Channel, RejectsACapacityOfZero) {
    test::RandomChooser chooser(5);
    test::DeterministicExecutor executor(chooser);
    EXPECT_THROW_WITH(Channel<int>(executor, 0), InvalidArgument, "capacity of at least 1");
}

TEST(Channel, AWeightBoundHoldsBackASendWhoseValueWouldExceedIt) {
    test::RandomChooser chooser(6);
    test::DeterministicExecutor executor(chooser);
    Channel<int> channel(executor, 10, 10, [](int value) { return static_cast<std::size_t>(value); });
    EXPECT_EQ(channel.capacity(), 10u);
    EXPECT_EQ(channel.max_weight(), 10u);
    std::vector<int> sent;
    TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> Task<void> {
        for (int value : {4, 5, 3, 3}) {
            EXPECT_TRUE(co_await channel.send(value));
            sent.push_back(value);
        }
    });
    executor.run_until_idle();
    // 4 + 5 fit in 10; 3 more would not.
    EXPECT_EQ(sent, (std::vector<int>{4, 5}));
    EXPECT_EQ(channel.weight(), 9u);
    EXPECT_EQ(channel.try_receive(), 4);
    executor.run_until_idle();
    // 5 + 3 fit; 3 more would not.
    EXPECT_EQ(sent, (std::vector<int>{4, 5, 3}));
    EXPECT_EQ(channel.weight(), 8u);
    EXPECT_EQ(channel.try_receive(), 5);
    executor.run_until_idle();
    EXPECT_EQ(sent, (std::vector<int>{4, 5, 3, 3}));
    EXPECT_EQ(channel.weight(), 6u);
    group.wait();
}

TEST(Channel, AValueHeavierThanTheBoundGoesInAloneOnceTheChannelIsEmpty) {
    test::RandomChooser chooser(7);
    test::DeterministicExecutor executor(chooser);
    Channel<int> channel(executor, 10, 10, [](int value) { return static_cast<std::size_t>(value); });
    int light = 1;
    ASSERT_TRUE(channel.try_send(light));
    std::vector<int> sent;
    TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> Task<void> {
        for (int value : {25, 1}) {
            EXPECT_TRUE(co_await channel.send(value));
            sent.push_back(value);
        }
    });
    executor.run_until_idle();
    EXPECT_TRUE(sent.empty());
    EXPECT_EQ(channel.try_receive(), 1);
    executor.run_until_idle();
    // The heavy value is alone in the channel, and nothing fits beside it.
    EXPECT_EQ(sent, (std::vector<int>{25}));
    EXPECT_EQ(channel.size(), 1u);
    EXPECT_EQ(channel.weight(), 25u);
    EXPECT_EQ(channel.try_receive(), 25);
    group.wait();
    EXPECT_EQ(channel.try_receive(), 1);
}

TEST(Channel, ASendNeverOvertakesAWaitingOne) {
    test::RandomChooser chooser(8);
    test::DeterministicExecutor executor(chooser);
    Channel<int> channel(executor, 10, 10, [](int value) { return static_cast<std::size_t>(value); });
    int first = 6;
    ASSERT_TRUE(channel.try_send(first));
    TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> Task<void> { EXPECT_TRUE(co_await channel.send(8)); });
    executor.run_until_idle();
    // 1 would fit beside 6, but 8 waits before it.
    int small = 1;
    EXPECT_FALSE(channel.try_send(small));
    group.spawn([&](std::stop_token const&) -> Task<void> { EXPECT_TRUE(co_await channel.send(1)); });
    executor.run_until_idle();
    EXPECT_EQ(channel.size(), 1u);
    EXPECT_EQ(channel.try_receive(), 6);
    executor.run_until_idle();
    EXPECT_EQ(channel.try_receive(), 8);
    EXPECT_EQ(channel.try_receive(), 1);
    group.wait();
}

TEST(Channel, ASenderWaitingBehindOneWhoseWaitIsStoppedGoesInIfItFits) {
    test::RandomChooser chooser(10);
    test::DeterministicExecutor executor(chooser);
    Channel<int> channel(executor, 10, 10, [](int value) { return static_cast<std::size_t>(value); });
    int first = 5;
    ASSERT_TRUE(channel.try_send(first));
    std::stop_source stop;
    std::optional<bool> heavy;
    std::optional<bool> light;
    TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> Task<void> { heavy = co_await channel.send(10, stop.get_token()); });
    executor.run_until_idle();
    group.spawn([&](std::stop_token const&) -> Task<void> { light = co_await channel.send(1); });
    executor.run_until_idle();
    EXPECT_FALSE(light.has_value()) << "1 fits beside 5, but waits behind 10";
    stop.request_stop();
    EXPECT_EQ(channel.weight(), 6u) << "1 goes in as the stop ends 10's wait, before either coroutine resumes";
    executor.run_until_idle();
    EXPECT_EQ(heavy, false);
    EXPECT_EQ(light, true) << "with 10 gone, nothing is left waiting before 1";
    EXPECT_EQ(channel.weight(), 6u);
    group.wait();
}

TEST(Channel, RejectsAWeightBoundOfZeroOrNoWeightFunction) {
    test::RandomChooser chooser(9);
    test::DeterministicExecutor executor(chooser);
    EXPECT_THROW_WITH(
        Channel<int>(executor, 1, 0, [](int) { return std::size_t{1}; }), InvalidArgument, "weight bound of at least 1"
    );
    EXPECT_THROW_WITH(Channel<int>(executor, 1, 1, nullptr), InvalidArgument, "needs a weight function");
}

TEST(Channel, ManyProducersAndConsumersDeliverEveryValueExactlyOnce) {
    ThreadPool pool(ThreadPool::Config{4});
    Channel<int> channel(pool, 3);
    constexpr int producers = 4;
    constexpr int per_producer = 500;
    std::atomic<long> sum{0};
    std::atomic<int> count{0};
    std::atomic<int> producing{producers};
    TaskGroup group(pool);
    for (int p = 0; p < producers; ++p) {
        group.spawn([&, p](std::stop_token const&) -> Task<void> {
            for (int i = 0; i < per_producer; ++i) {
                co_await channel.send(p * per_producer + i);
            }
            if (--producing == 0) {
                channel.close();
            }
        });
    }
    for (int c = 0; c < 3; ++c) {
        group.spawn([&](std::stop_token const&) -> Task<void> {
            while (std::optional<int> value = co_await channel.receive()) {
                sum += *value;
                ++count;
            }
        });
    }
    group.wait();
    constexpr int total = producers * per_producer;
    EXPECT_EQ(count.load(), total);
    EXPECT_EQ(sum.load(), static_cast<long>(total) * (total - 1) / 2);
}
