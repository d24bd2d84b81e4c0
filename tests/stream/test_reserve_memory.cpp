// stream::reserve_memory: HOST admission for coroutines, which waits for room
// by sleeping on the executor instead of blocking its thread.
#include <spillway/stream/reserve_memory.hpp>

#include <common/error_matchers.hpp>
#include <common/temporary_directory.hpp>
#include <common/watchdog.hpp>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include <spillway/core/error.hpp>
#include <spillway/exec/sync_wait.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/stream/context.hpp>

#include <gtest/gtest.h>

#include <memory/memory_test_support.hpp>

using namespace spillway;
using namespace spillway::memory;

using spillway::test::BufferPile;
using spillway::test::host_buffer;
using spillway::test::mebibyte;
using spillway::test::ScopedSpillFunction;
using spillway::test::TemporaryDirectory;
using spillway::test::test_config;
using spillway::test::Watchdog;

TEST(ReserveMemory, ReservesAtOnceWhenThereIsRoomAndSpillsWhatIsMissing) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 4 * mebibyte));
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 1});
    EXPECT_EQ(exec::sync_wait(pool, stream::reserve_memory(resource, pool, mebibyte)).size(), mebibyte);
    BufferPile pile(resource, 4, mebibyte);
    ScopedSpillFunction const spilling(resource, [&](std::size_t n) { return pile.spill(n); });
    EXPECT_EQ(exec::sync_wait(pool, stream::reserve_memory(resource, pool, 2 * mebibyte)).size(), 2 * mebibyte);
    EXPECT_EQ(pile.count(), 2U);
    EXPECT_EQ(resource.memory_waiting(), 0U);
}

TEST(ReserveMemory, ZeroBytesAreReservedAtOnceFromTheResourceEvenWhenHostIsOverItsLimit) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, mebibyte));
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 1});
    auto const overbooked = resource.reserve_and_spill(MemoryType::HOST, 2 * mebibyte, AllowOverbooking::yes);
    ASSERT_GT(resource.memory_reserved(MemoryType::HOST), resource.memory_limit(MemoryType::HOST));
    auto reservation = exec::sync_wait(pool, stream::reserve_memory(resource, pool, 0));
    EXPECT_EQ(reservation.resource(), &resource);
    EXPECT_EQ(reservation.size(), 0U);
    EXPECT_EQ(resource.make_buffer(0, reservation).size(), 0U) << "an empty buffer of the resource";
}

TEST(ReserveMemory, WaitsWithoutHoldingItsThreadSoThatWorkOnTheSameThreadCanFreeMemory) {
    // One thread: the waiting coroutine and the one that frees the memory
    // share it. A request that blocked its thread would never see the memory
    // freed, and would fail after the timeout.
    Watchdog const watchdog("a coroutine waiting for memory freed on its own thread");
    TemporaryDirectory root;
    auto config = test_config(root, mebibyte);
    config.reserve_timeout = std::chrono::seconds(10);
    BufferResource resource(config);
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 1});
    std::optional<Buffer> held = host_buffer(resource, mebibyte);
    std::atomic<bool> waiter_done{false};
    auto const waiter = [&]() -> exec::Task<std::size_t> {
        co_await pool.schedule();
        auto const reservation = co_await stream::reserve_memory(resource, pool, mebibyte / 2);
        co_return reservation.size();
    };
    auto const freer = [&]() -> exec::Task<> {
        co_await pool.schedule();
        while (resource.memory_waiting() != mebibyte / 2 && !waiter_done) {
            co_await pool.sleep_for(std::chrono::microseconds(100));
        }
        EXPECT_EQ(resource.memory_available(MemoryType::HOST), 0) << "a waiting request holds nothing";
        held.reset();
    };
    std::size_t granted = 0;
    std::string error;
    std::thread waiting([&] {
        try {
            granted = exec::sync_wait(waiter());  // blocks; only the pool's thread runs it
        } catch (std::exception const& e) {
            error = e.what();
        }
        waiter_done = true;
    });
    exec::sync_wait(freer());
    waiting.join();
    EXPECT_EQ(error, "");
    EXPECT_EQ(granted, mebibyte / 2);
    EXPECT_EQ(resource.memory_waiting(), 0U);
}

TEST(ReserveMemory, FailsAtOnceForMoreThanTheLimit) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, mebibyte));
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 1});
    EXPECT_THROW_WITH(
        static_cast<void>(exec::sync_wait(pool, stream::reserve_memory(resource, pool, mebibyte + 1))),
        OutOfMemory, "more than the limit"
    );
    EXPECT_EQ(resource.memory_waiting(), 0U);
}

TEST(ReserveMemory, FailsNamingTheTimeoutWhenNothingIsFreedForThatLong) {
    TemporaryDirectory root;
    auto config = test_config(root, mebibyte);
    config.reserve_timeout = std::chrono::milliseconds(30);
    BufferResource resource(config);
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 1});
    auto const held = host_buffer(resource, mebibyte);
    EXPECT_THROW_WITH(
        static_cast<void>(exec::sync_wait(pool, stream::reserve_memory(resource, pool, mebibyte / 2))),
        OutOfMemory, "memory_reserve_timeout"
    );
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
    EXPECT_EQ(resource.memory_waiting(), 0U);
}

TEST(ReserveMemory, AStopRequestedWhileItWaitsEndsItAtOnceWithPipelineAborted) {
    // A pipeline that failed may never free what its other actors wait for:
    // the abort ends their waits instead of the timeout.
    Watchdog const watchdog("a request for memory whose pipeline was aborted while it waited");
    TemporaryDirectory root;
    auto config = test_config(root, mebibyte);
    config.reserve_timeout = std::chrono::minutes(1);
    BufferResource resource(config);
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 1});
    std::optional<Buffer> held = host_buffer(resource, mebibyte);
    std::stop_source abort;
    std::thread aborter([&] {
        while (resource.memory_waiting() != mebibyte / 2) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        abort.request_stop();
    });
    EXPECT_THROW_WITH(
        static_cast<void>(
            exec::sync_wait(pool, stream::reserve_memory(resource, pool, mebibyte / 2, abort.get_token()))
        ),
        stream::PipelineAborted, "stopped waiting for 512.00 KiB of HOST: the pipeline was aborted"
    );
    aborter.join();
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
    EXPECT_EQ(resource.memory_waiting(), 0U);
    // Once stop is requested, nothing more is taken, even what fits (a
    // pipeline that failed needs no more memory); 0 bytes still are.
    held.reset();
    EXPECT_THROW_WITH(
        static_cast<void>(
            exec::sync_wait(pool, stream::reserve_memory(resource, pool, mebibyte / 2, abort.get_token()))
        ),
        stream::PipelineAborted, "the pipeline was aborted"
    );
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
    EXPECT_EQ(exec::sync_wait(pool, stream::reserve_memory(resource, pool, 0, abort.get_token())).size(), 0U);
}
