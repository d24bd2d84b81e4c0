// BufferResource::reserve_or_wait and HostAdmission: admission that waits for
// HOST memory to be freed or spilled instead of overbooking, with a progress
// timeout.
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/host_admission.hpp>
#include <spillway/memory/host_allocator.hpp>
#include <spillway/memory/spillable_store.hpp>

#include <common/error_matchers.hpp>
#include <common/temporary_directory.hpp>
#include <common/watchdog.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>

#include <gtest/gtest.h>

#include "memory_test_support.hpp"

using namespace spillway;
using namespace spillway::memory;

using spillway::test::BufferPile;
using spillway::test::host_buffer;
using spillway::test::mebibyte;
using spillway::test::ScopedSpillFunction;
using spillway::test::TemporaryDirectory;
using spillway::test::test_config;
using spillway::test::Watchdog;

namespace {

/// Calls `resource.reserve_or_wait(size)` on a thread of its own.
class Waiter {
  public:
    Waiter(BufferResource& resource, std::size_t size)
        : thread_([this, &resource, size] {
              try {
                  granted_ = resource.reserve_or_wait(size);
              } catch (std::exception const& error) {
                  error_ = error.what();
              }
          }) {}
    /// Waits for the call to return; its reservation, or its error as a failure.
    MemoryReservation join() {
        thread_.join();
        EXPECT_EQ(error_, "");
        return granted_ ? std::move(*granted_) : MemoryReservation();
    }
  private:
    std::optional<MemoryReservation> granted_;
    std::string error_;
    std::thread thread_;
};

/// Blocks until `resource` has a `reserve_or_wait` caller waiting for `bytes`.
void wait_until_waiting(BufferResource const& resource, std::uint64_t bytes) {
    while (resource.memory_waiting() != bytes) {
        std::this_thread::yield();
    }
}

}  // namespace

TEST(ReserveOrWait, ReservesAtOnceWhenThereIsRoom) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, mebibyte));
    auto const reservation = resource.reserve_or_wait(mebibyte);
    EXPECT_EQ(reservation.size(), mebibyte);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), 0);
}

TEST(ReserveOrWait, SpillsWhatIsMissingFirst) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 4 * mebibyte));
    BufferPile pile(resource, 4, mebibyte);
    ScopedSpillFunction const spilling(resource, [&](std::size_t n) { return pile.spill(n); });
    auto const reservation = resource.reserve_or_wait(2 * mebibyte);
    EXPECT_EQ(reservation.size(), 2 * mebibyte);
    EXPECT_EQ(pile.count(), 2U);
    EXPECT_EQ(resource.memory_waiting(), 0U);
}

TEST(ReserveOrWait, WaitsForMemoryFreedElsewhereInsteadOfOverbooking) {
    Watchdog const watchdog("a reserve_or_wait caller waiting for a freed buffer");
    TemporaryDirectory root;
    BufferResource resource(test_config(root, mebibyte));
    std::optional<Buffer> held = host_buffer(resource, mebibyte);
    Waiter waiter(resource, mebibyte / 2);
    wait_until_waiting(resource, mebibyte / 2);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), 0) << "a waiting request holds nothing";
    held.reset();
    EXPECT_EQ(waiter.join().size(), mebibyte / 2);
    EXPECT_EQ(resource.memory_waiting(), 0U);
}

TEST(ReserveOrWait, OtherRequestsThatFailAreNotProgress) {
    // A chunk that cannot be received yet is tried again and again; were
    // each failed try memory freed, a waiting request would wait for ever.
    Watchdog const watchdog("a request beside requests that keep failing");
    TemporaryDirectory root;
    auto config = test_config(root, mebibyte);
    config.reserve_timeout = std::chrono::milliseconds(100);
    BufferResource resource(config);
    auto const held = host_buffer(resource, mebibyte);
    std::atomic<bool> done{false};
    std::thread failing([&] {
        while (!done.load()) {
            EXPECT_THROW(
                static_cast<void>(resource.reserve_and_spill(MemoryType::HOST, 1024, AllowOverbooking::no)),
                OutOfMemory
            );
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    });
    EXPECT_THROW_WITH(
        static_cast<void>(resource.reserve_or_wait(mebibyte / 2)), OutOfMemory, "memory_reserve_timeout"
    );
    done = true;
    failing.join();
}

TEST(ReserveOrWait, APrefetchLeavesTheRoomThatARequestWaitsFor) {
    // What a prefetch took would be spilled again for the request: memory
    // freed, so the request would wait on while nothing progressed.
    Watchdog const watchdog("a prefetch beside a waiting request");
    TemporaryDirectory root;
    BufferResource resource(test_config(root, mebibyte));
    SpillableStore store(resource, "test");
    store.insert(1, host_buffer(resource, mebibyte / 4));
    ASSERT_EQ(store.spill(mebibyte / 4), mebibyte / 4);
    std::optional<Buffer> held = host_buffer(resource, mebibyte / 2);
    Waiter waiter(resource, 3 * mebibyte / 4);
    wait_until_waiting(resource, 3 * mebibyte / 4);
    std::array<SpillableStore::Key, 1> const keys{1};
    EXPECT_EQ(store.prefetch(keys), 0U) << "the free half of HOST is waited for";
    held.reset();
    EXPECT_EQ(waiter.join().size(), 3 * mebibyte / 4);
    EXPECT_EQ(store.prefetch(keys), mebibyte / 4) << "once nobody waits";
}

TEST(ReserveOrWait, ThePeriodicSpillThreadMakesRoomForAWaitingRequest) {
    Watchdog const watchdog("a reserve_or_wait caller waiting for the periodic spill thread");
    TemporaryDirectory root;
    auto config = test_config(root, 4 * mebibyte);
    config.spill_interval = std::chrono::milliseconds(1);
    config.reserve_timeout = std::chrono::seconds(5);
    BufferResource resource(config);
    BufferPile pile(resource, 4, mebibyte);
    // Nothing can be spilled when the request arrives, so it waits.
    Waiter waiter(resource, mebibyte);
    wait_until_waiting(resource, mebibyte);
    // Registered now, the pile is spilled only by the periodic thread, which
    // spills what waiting requests need beyond its headroom of 0.
    ScopedSpillFunction const spilling(resource, [&](std::size_t n) { return pile.spill(n); });
    EXPECT_EQ(waiter.join().size(), mebibyte);
    EXPECT_EQ(pile.count(), 3U);
}

TEST(ReserveOrWait, FailsAtOnceForMoreThanTheLimit) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, mebibyte));
    EXPECT_THROW_WITH(
        static_cast<void>(resource.reserve_or_wait(mebibyte + 1)), OutOfMemory, "more than the limit"
    );
    EXPECT_EQ(resource.memory_waiting(), 0U);
}

TEST(ReserveOrWait, FailsNamingTheTimeoutWhenNothingIsFreedForThatLong) {
    TemporaryDirectory root;
    auto config = test_config(root, mebibyte);
    config.reserve_timeout = std::chrono::milliseconds(20);
    BufferResource resource(config);
    auto const held = host_buffer(resource, mebibyte);
    EXPECT_THROW_WITH(
        static_cast<void>(resource.reserve_or_wait(mebibyte / 2)), OutOfMemory, "memory_reserve_timeout"
    );
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
    EXPECT_EQ(resource.memory_waiting(), 0U);
}

TEST(ReserveOrWait, ItsFailureSaysHowMuchContainersAndBuffersHold) {
    TemporaryDirectory root;
    auto config = test_config(root, mebibyte);
    config.reserve_timeout = std::chrono::milliseconds(20);
    BufferResource resource(config);
    auto const buffer = host_buffer(resource, mebibyte / 4);
    std::optional<std::vector<std::byte, HostAllocator<std::byte>>> column;
    {
        ScopedHostResource const scope(&resource);
        column.emplace(3 * mebibyte / 4);
    }
    auto const containers = resource.memory_used(MemoryType::HOST) - mebibyte / 4;
    EXPECT_GE(containers, 3 * mebibyte / 4);
    EXPECT_THROW_WITH(static_cast<void>(resource.reserve_or_wait(mebibyte / 2)), OutOfMemory,
                      format_bytes(containers) + " by containers, such as the columns of tables being worked on, and "
                          + format_bytes(mebibyte / 4) + " by buffers");
    column.reset();
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), mebibyte / 4);
}

TEST(ReserveOrWait, TwoRequestsThatNothingCanSatisfyBothFailInsteadOfWakingEachOtherForEver) {
    // Each failed attempt gives its bytes back, which wakes the other
    // waiter; if that counted as memory freed, neither would ever time out.
    Watchdog const watchdog("two requests that nothing can satisfy");
    TemporaryDirectory root;
    auto config = test_config(root, mebibyte);
    config.reserve_timeout = std::chrono::milliseconds(100);
    BufferResource resource(config);
    auto const held = host_buffer(resource, mebibyte);
    auto const request = [&] {
        EXPECT_THROW_WITH(
            static_cast<void>(resource.reserve_or_wait(mebibyte / 2)), OutOfMemory, "memory_reserve_timeout"
        );
    };
    std::thread first(request);
    std::thread second(request);
    first.join();
    second.join();
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
    EXPECT_EQ(resource.memory_waiting(), 0U);
}

TEST(HostAdmission, CountsAsWaitingBetweenAttemptsAndReservesOnceMemoryIsFreed) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, mebibyte));
    std::optional<Buffer> held = host_buffer(resource, mebibyte);
    {
        HostAdmission admission(resource, mebibyte / 2);
        EXPECT_EQ(resource.memory_waiting(), mebibyte / 2);
        EXPECT_EQ(admission.try_reserve().size(), 0U);
        EXPECT_EQ(resource.memory_waiting(), mebibyte / 2);
        EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U) << "a failed attempt holds nothing";
        held.reset();
        auto const reservation = admission.try_reserve();
        EXPECT_EQ(reservation.size(), mebibyte / 2);
        EXPECT_EQ(resource.memory_waiting(), 0U);
    }
    EXPECT_EQ(resource.memory_waiting(), 0U);
}

TEST(HostAdmission, ItsOwnAttemptsAreNotProgressSoItFailsAfterTheTimeout) {
    // Each failed attempt reserves and gives back its bytes; counting that as
    // memory freed would let a request that nothing can satisfy wait for ever.
    Watchdog const watchdog("a request that nothing can satisfy");
    TemporaryDirectory root;
    auto config = test_config(root, mebibyte);
    config.reserve_timeout = std::chrono::milliseconds(30);
    BufferResource resource(config);
    auto const held = host_buffer(resource, mebibyte);
    HostAdmission admission(resource, mebibyte / 2);
    auto const give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    bool failed = false;
    while (!failed && std::chrono::steady_clock::now() < give_up) {
        EXPECT_EQ(admission.try_reserve().size(), 0U);
        try {
            admission.check_progress();
        } catch (OutOfMemory const& error) {
            EXPECT_NE(std::string(error.what()).find("memory_reserve_timeout"), std::string::npos) << error.what();
            failed = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(failed) << "check_progress never gave up";
}

TEST(HostAdmission, OtherRequestsAttemptsAreNotProgressEither) {
    Watchdog const watchdog("two admissions that nothing can satisfy");
    TemporaryDirectory root;
    auto config = test_config(root, mebibyte);
    config.reserve_timeout = std::chrono::milliseconds(30);
    BufferResource resource(config);
    auto const held = host_buffer(resource, mebibyte);
    HostAdmission first(resource, mebibyte / 2);
    HostAdmission second(resource, mebibyte / 4);
    auto const give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    bool failed = false;
    while (!failed && std::chrono::steady_clock::now() < give_up) {
        // Each sees the other's attempt give its bytes back between its own.
        EXPECT_EQ(first.try_reserve().size(), 0U);
        EXPECT_EQ(second.try_reserve().size(), 0U);
        try {
            first.check_progress();
        } catch (OutOfMemory const&) {
            failed = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(failed) << "check_progress counted the other request's attempts as memory freed";
}

TEST(HostAdmission, RefusesMoreThanTheLimitAtOnce) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, mebibyte));
    EXPECT_THROW_WITH(HostAdmission(resource, mebibyte + 1), OutOfMemory, "more than the limit");
    EXPECT_EQ(resource.memory_waiting(), 0U);
}
