#include <spillway/comm/future.hpp>

#include <common/error_matchers.hpp>
#include <common/rendezvous.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <spillway/core/error.hpp>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::comm;

TEST(Future, AReadyFutureHoldsItsValue) {
    auto future = Future<std::string>::ready("value");
    EXPECT_TRUE(future.valid());
    EXPECT_TRUE(future.test());
    EXPECT_TRUE(future.wait_for(std::chrono::seconds(0)));
    EXPECT_EQ(future.get(), "value");
    EXPECT_FALSE(future.valid());
}

TEST(Future, AnIncompleteFutureIsNotReadyUntilItsStateIsSet) {
    auto state = std::make_shared<comm::detail::FutureState<int>>();
    Future<int> future(state);
    EXPECT_FALSE(future.test());
    EXPECT_FALSE(future.wait_for(std::chrono::milliseconds(1)));
    state->set_value(7);
    EXPECT_TRUE(future.test());
    EXPECT_EQ(future.get(), 7);
}

TEST(Future, GetRethrowsTheErrorTheOperationFailedWith) {
    auto state = std::make_shared<comm::detail::FutureState<void>>();
    Future<void> future(state);
    state->set_error(std::make_exception_ptr(IoError("MPI_Isend failed")));
    EXPECT_TRUE(future.test());
    EXPECT_THROW_WITH(future.get(), IoError, "MPI_Isend failed");
}

TEST(Future, EveryWaiterWakesWhenTheOperationCompletes) {
    constexpr int waiters = 3;
    auto state = std::make_shared<comm::detail::FutureState<void>>();
    Future<void> const future(state);
    test::Rendezvous all_waiting(waiters + 1);
    std::vector<std::thread> threads;
    for (int i = 0; i < waiters; ++i) {
        threads.emplace_back([&] {
            EXPECT_TRUE(all_waiting.arrive_and_wait());
            future.wait();
        });
    }
    EXPECT_TRUE(all_waiting.arrive_and_wait());
    state->set_value({});
    for (auto& thread : threads) {
        thread.join();
    }
    EXPECT_TRUE(future.test());
}

TEST(Future, AFutureWithoutAnOperationIsMisuse) {
    Future<int> future;
    EXPECT_FALSE(future.valid());
    EXPECT_THROW_WITH(static_cast<void>(future.test()), InvalidArgument, "not valid");
    EXPECT_THROW_WITH(future.wait(), InvalidArgument, "not valid");
    EXPECT_THROW_WITH(future.get(), InvalidArgument, "not valid");
    auto ready = Future<int>::ready(1);
    static_cast<void>(ready.get());
    EXPECT_THROW_WITH(ready.get(), InvalidArgument, "not valid");
}
