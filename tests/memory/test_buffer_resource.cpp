#include <spillway/memory/buffer_resource.hpp>

#include <common/error_matchers.hpp>
#include <common/event.hpp>
#include <common/rendezvous.hpp>

#include <spillway/core/error.hpp>
#include <common/temporary_directory.hpp>
#include <common/watchdog.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <fstream>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <spillway/memory/system_memory.hpp>

#include <gtest/gtest.h>

#include "memory_test_support.hpp"

using namespace spillway;
using namespace spillway::memory;

using spillway::test::BufferPile;
using spillway::test::Event;
using spillway::test::Rendezvous;
using spillway::test::expect_all_tiers_at_zero;
using spillway::test::ScopedSpillFunction;
using spillway::test::statistic;
using spillway::test::mebibyte;
using spillway::test::TemporaryDirectory;
using spillway::test::test_config;
using spillway::test::Watchdog;

namespace {

MemoryConfig host_limited(std::uint64_t host_limit) {
    MemoryConfig config;
    config.host_limit = SizeSpec::bytes(host_limit);
    return config;
}

}  // namespace

TEST(BufferResource, DefaultHostLimitIsEightyPercentOfTheHostCapacity) {
    // Checked against the kernel's own figure, /proc/meminfo's MemTotal: the
    // capacity is that, or less under a cgroup limit.
    std::ifstream meminfo("/proc/meminfo");
    std::string label;
    std::uint64_t total_kib = 0;
    ASSERT_TRUE(meminfo >> label >> total_kib) << "cannot read /proc/meminfo";
    ASSERT_EQ(label, "MemTotal:");
    auto const capacity = host_memory_capacity();
    EXPECT_LE(capacity, total_kib * 1024);
    EXPECT_GT(capacity, 0U);
    BufferResource resource;
    EXPECT_NEAR(static_cast<double>(resource.memory_limit(MemoryType::HOST)), 0.8 * static_cast<double>(capacity),
                1.0);
}

TEST(BufferResource, ReservedBytesCountAsUsedWhenAvailabilityIsComputed) {
    BufferResource resource(host_limited(100));
    auto reservation = resource.reserve(MemoryType::HOST, 30, AllowOverbooking::no);
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 30U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), 70);
}

TEST(BufferResource, AReservationTurnsIntoBufferBytesWithoutBeingCountedTwice) {
    BufferResource resource(host_limited(100));
    auto reservation = resource.reserve(MemoryType::HOST, 60, AllowOverbooking::no);
    auto buffer = resource.make_buffer(40, reservation);
    EXPECT_EQ(reservation.size(), 20U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 40U);
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 20U);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), 40);
    reservation = MemoryReservation();
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), 60);
}

TEST(BufferResource, TryReserveReturnsAnEmptyReservationWhenTheTierIsFull) {
    BufferResource resource(host_limited(100));
    auto held = resource.reserve(MemoryType::HOST, 80, AllowOverbooking::no);
    auto refused = resource.try_reserve(MemoryType::HOST, 21);
    EXPECT_TRUE(refused.empty());
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 80U);
    auto granted = resource.try_reserve(MemoryType::HOST, 20);
    EXPECT_EQ(granted.size(), 20U);
    EXPECT_EQ(granted.mem_type(), MemoryType::HOST);
}

TEST(BufferResource, TryReserveRefusesSizesThatWouldOverflowTheAccounting) {
    BufferResource resource(host_limited(100));
    auto held = resource.reserve(MemoryType::HOST, 10, AllowOverbooking::no);
    EXPECT_TRUE(resource.try_reserve(MemoryType::HOST, SIZE_MAX).empty());
}

TEST(BufferResource, ReserveAndSpillDoesNotGrantSizeMaxUnderASmallLimit) {
    // The overbooked first step of reserve_and_spill wrapped the reserved
    // total, which then looked small enough to grant.
    BufferResource resource(host_limited(16 * mebibyte));
    EXPECT_THROW_WITH(
        resource.reserve_and_spill(MemoryType::HOST, SIZE_MAX, AllowOverbooking::no), OutOfMemory, "HOST"
    );
    EXPECT_THROW_WITH(resource.reserve(MemoryType::HOST, SIZE_MAX, AllowOverbooking::no), OutOfMemory, "HOST");
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), static_cast<std::int64_t>(16 * mebibyte));
    expect_all_tiers_at_zero(resource);
}

TEST(BufferResource, OverbookedReservationsCannotWrapTheReservedTotal) {
    BufferResource resource(host_limited(16 * mebibyte));
    auto const huge = std::uint64_t{1} << 63;
    EXPECT_THROW_WITH(resource.reserve(MemoryType::HOST, huge, AllowOverbooking::yes), OutOfMemory, "at most");
    auto first = resource.reserve(MemoryType::HOST, BufferResource::max_committed_bytes, AllowOverbooking::yes);
    // Added to the first, this one would make the reserved total 2^64: 0.
    EXPECT_THROW_WITH(
        resource.reserve(MemoryType::HOST, huge + 1, AllowOverbooking::yes), OutOfMemory,
        "cannot reserve " + format_bytes(huge + 1)
    );
    EXPECT_THROW_WITH(resource.reserve(MemoryType::HOST, 1, AllowOverbooking::yes), OutOfMemory, "at most");
    EXPECT_THROW_WITH(
        resource.reserve_and_spill(MemoryType::HOST, 1, AllowOverbooking::yes), OutOfMemory, "at most"
    );
    EXPECT_TRUE(resource.try_reserve(MemoryType::HOST, 1).empty());
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), BufferResource::max_committed_bytes);
    EXPECT_EQ(
        resource.memory_available(MemoryType::HOST),
        static_cast<std::int64_t>(16 * mebibyte) - static_cast<std::int64_t>(BufferResource::max_committed_bytes)
    );
    first = MemoryReservation();
    expect_all_tiers_at_zero(resource);
}

TEST(BufferResource, MemoryAvailableNeverWrapsWhateverTheLimitAndTheTotals) {
    BufferResource resource(host_limited(0));
    resource.set_memory_limit(MemoryType::HOST, SizeSpec::bytes(UINT64_MAX));
    EXPECT_EQ(resource.memory_limit(MemoryType::HOST), UINT64_MAX);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), INT64_MAX);
    EXPECT_TRUE(resource.try_reserve(MemoryType::HOST, SIZE_MAX).empty());
    {
        auto const all = resource.reserve(MemoryType::HOST, BufferResource::max_committed_bytes, AllowOverbooking::no);
        EXPECT_EQ(resource.memory_available(MemoryType::HOST), 0);
    }
    resource.set_memory_limit(MemoryType::HOST, SizeSpec::bytes(0));
    auto const all = resource.reserve(MemoryType::HOST, BufferResource::max_committed_bytes, AllowOverbooking::yes);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), -INT64_MAX);
}

TEST(BufferResource, ReserveThrowsOutOfMemoryNamingTheLimitAndItsOption) {
    BufferResource resource(host_limited(100));
    EXPECT_THROW_WITH(
        resource.reserve(MemoryType::HOST, 101, AllowOverbooking::no), OutOfMemory, "memory_limit_host"
    );
    resource.set_memory_limit(MemoryType::DISK, SizeSpec::bytes(10));
    EXPECT_THROW_WITH(
        resource.reserve(MemoryType::DISK, 11, AllowOverbooking::no), OutOfMemory, "max_spill_bytes"
    );
    expect_all_tiers_at_zero(resource);
}

TEST(BufferResource, OverbookingIsGrantedPastTheLimitAndMakesAvailableNegative) {
    BufferResource resource(host_limited(100));
    auto reservation = resource.reserve(MemoryType::HOST, 150, AllowOverbooking::yes);
    EXPECT_EQ(reservation.size(), 150U);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), -50);
}

TEST(BufferResource, LimitsChangedAtRunTimeApplyToLaterReservations) {
    BufferResource resource(host_limited(100));
    EXPECT_TRUE(resource.try_reserve(MemoryType::HOST, 200).empty());
    resource.set_memory_limit(MemoryType::HOST, SizeSpec::bytes(300));
    EXPECT_EQ(resource.memory_limit(MemoryType::HOST), 300U);
    EXPECT_EQ(resource.try_reserve(MemoryType::HOST, 200).size(), 200U);

    resource.set_memory_limit(MemoryType::HOST, SizeSpec::percent(50));
    EXPECT_EQ(resource.memory_limit(MemoryType::HOST), host_memory_capacity() / 2);
}

TEST(BufferResource, LoweringALimitBelowWhatIsInUseKeepsTheBuffers) {
    BufferResource resource(host_limited(100));
    auto reservation = resource.reserve(MemoryType::HOST, 80, AllowOverbooking::no);
    auto buffer = resource.make_buffer(80, reservation);
    resource.set_memory_limit(MemoryType::HOST, SizeSpec::bytes(50));
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), -30);
    EXPECT_EQ(buffer.size(), 80U);
    EXPECT_TRUE(resource.try_reserve(MemoryType::HOST, 1).empty());
}

TEST(BufferResource, PeakUsageIsTrackedPerTier) {
    BufferResource resource(host_limited(mebibyte));
    {
        auto reservation = resource.reserve(MemoryType::HOST, 300, AllowOverbooking::no);
        auto first = resource.make_buffer(100, reservation);
        auto second = resource.make_buffer(200, reservation);
    }
    auto reservation = resource.reserve(MemoryType::HOST, 50, AllowOverbooking::no);
    auto third = resource.make_buffer(50, reservation);
    EXPECT_EQ(resource.peak_memory_used(MemoryType::HOST), 300U);
    EXPECT_EQ(resource.peak_memory_used(MemoryType::DISK), 0U);
}

TEST(BufferResource, EveryTierReturnsToZeroWhenBuffersAndReservationsAreGone) {
    BufferResource resource(host_limited(mebibyte));
    {
        auto reservation = resource.reserve(MemoryType::HOST, 4096, AllowOverbooking::no);
        std::vector<Buffer> buffers;
        for (std::size_t size : {0, 1, 1000, 2048}) {
            buffers.push_back(resource.make_buffer(size, reservation));
        }
        auto disk = resource.reserve(MemoryType::DISK, 10, AllowOverbooking::no);
    }
    expect_all_tiers_at_zero(resource);
}

TEST(BufferResource, HostBuffersOf64KibibytesOrMoreAreAlignedForDirectIo) {
    BufferResource resource(host_limited(4 * mebibyte));
    auto reservation = resource.reserve(MemoryType::HOST, 3 * 65'000, AllowOverbooking::no);
    for (int i = 0; i < 3; ++i) {
        auto buffer = resource.make_buffer(65'000, reservation);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data().data()) % host_buffer_alignment, 0U);
        EXPECT_EQ(buffer.data().size(), 65'000U);
    }
}

TEST(BufferResource, SmallHostBuffersOccupyLittleMoreThanTheirSize) {
    // Below 1 KiB, glibc's chunk: the size and an 8-byte header in 16-byte steps.
    EXPECT_EQ(BufferResource::allocated_capacity(1), 32U);
    EXPECT_EQ(BufferResource::allocated_capacity(1000), 1008U);
    // From 1 KiB on, the size class (a sixteenth of the power of two) and the header.
    EXPECT_EQ(BufferResource::allocated_capacity(1024), 1040U);
    EXPECT_EQ(BufferResource::allocated_capacity(4097), 4368U);  // 4096 + 256
    EXPECT_EQ(BufferResource::allocated_capacity(5000), 5136U);  // 5120
    for (std::size_t size = 1024; size < 60 * 1024; size += 999) {
        EXPECT_LE(BufferResource::allocated_capacity(size), size + size / 16 + 32) << size;
    }
    EXPECT_EQ(BufferResource::allocated_capacity(60 * 1024), 60 * 1024 + 16U);
    EXPECT_EQ(BufferResource::allocated_capacity(60 * 1024 + 1), 64 * 1024U);
    BufferResource resource(host_limited(mebibyte));
    auto reservation = resource.reserve(MemoryType::HOST, 5000, AllowOverbooking::no);
    auto buffer = resource.make_buffer(5000, reservation);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data().data()) % __STDCPP_DEFAULT_NEW_ALIGNMENT__, 0U);
    EXPECT_EQ(buffer.data().size(), 5000U);
}

namespace {

/// A HOST buffer of `size` bytes of `resource`, byte `i` holding `i % 251`.
Buffer numbered_buffer(BufferResource& resource, std::size_t size) {
    auto buffer = spillway::test::host_buffer(resource, size);
    for (std::size_t i = 0; i < size; ++i) {
        buffer.data()[i] = static_cast<std::byte>(i % 251);
    }
    return buffer;
}

/// Whether `buffer` holds `numbered_buffer`'s bytes, up to its size.
bool holds_numbered_bytes(Buffer const& buffer) {
    auto const bytes = buffer.data();
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (bytes[i] != static_cast<std::byte>(i % 251)) {
            return false;
        }
    }
    return true;
}

}  // namespace

TEST(BufferResource, TruncateShortensASmallBufferKeepingItsBytesAndReturnsTheRestToTheTier) {
    BufferResource resource(host_limited(mebibyte));
    auto buffer = numbered_buffer(resource, 5000);
    resource.truncate(buffer, 3000);
    EXPECT_EQ(buffer.size(), 3000U);
    EXPECT_TRUE(holds_numbered_bytes(buffer));
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 3000U);
    resource.truncate(buffer, 3000);
    EXPECT_EQ(buffer.size(), 3000U);
    resource.truncate(buffer, 0);
    EXPECT_EQ(buffer.size(), 0U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
    { auto const freed = std::move(buffer); }
    expect_all_tiers_at_zero(resource);
}

TEST(BufferResource, TruncateUnmapsTheTailOfAMappedBufferAndCopiesOneThatBecomesSmall) {
    BufferResource resource(host_limited(mebibyte));
    auto buffer = numbered_buffer(resource, 256 * 1024);
    auto const* const bytes = buffer.data().data();
    resource.truncate(buffer, 100 * 1024 + 1);
    EXPECT_EQ(buffer.data().data(), bytes);
    EXPECT_TRUE(holds_numbered_bytes(buffer));
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 100 * 1024 + 1U);
    resource.truncate(buffer, 1000);
    EXPECT_EQ(buffer.size(), 1000U);
    EXPECT_TRUE(holds_numbered_bytes(buffer));
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 1000U);
    { auto const freed = std::move(buffer); }
    expect_all_tiers_at_zero(resource);
}

TEST(BufferResource, ATruncatedMappedBufferHasZeroPaddingAndIsPooledAtItsNewSize) {
    constexpr std::size_t shortened = 100 * 1024 + 1;
    constexpr std::size_t page = 4096;
    BufferResource resource(host_limited(mebibyte));
    {
        auto buffer = numbered_buffer(resource, 256 * 1024);
        resource.truncate(buffer, shortened);
        // The padding to the next page goes to disk with the buffer.
        std::span<std::byte const> const padding(buffer.data().data() + shortened, page - shortened % page);
        EXPECT_TRUE(std::ranges::all_of(padding, [](std::byte value) { return value == std::byte{0}; }));
    }
    EXPECT_EQ(resource.memory_pooled(), BufferResource::allocated_capacity(shortened));
    auto const reused = numbered_buffer(resource, shortened);
    EXPECT_EQ(resource.memory_pooled(), 0U);
    EXPECT_TRUE(holds_numbered_bytes(reused));
}

TEST(BufferResource, TruncateRejectsLengtheningAndBuffersOfOtherResourcesOrTiers) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root));
    BufferResource other(test_config(root));
    auto buffer = numbered_buffer(resource, 5000);
    EXPECT_THROW_WITH(resource.truncate(buffer, 5001), InvalidArgument, "cannot lengthen");
    EXPECT_THROW_WITH(other.truncate(buffer, 10), InvalidArgument, "HOST buffer of this BufferResource");
    auto spilled = spillway::test::move_to(resource, std::move(buffer), MemoryType::DISK);
    EXPECT_THROW_WITH(resource.truncate(spilled, 10), InvalidArgument, "HOST buffer of this BufferResource");
    EXPECT_EQ(spilled.size(), 5000U);
    EXPECT_EQ(resource.memory_used(MemoryType::DISK), 5000U);
}

TEST(BufferResource, MakeBufferRejectsAReservationThatCannotPayForIt) {
    BufferResource resource(host_limited(mebibyte));
    BufferResource other(host_limited(mebibyte));
    auto small = resource.reserve(MemoryType::HOST, 10, AllowOverbooking::no);
    EXPECT_THROW_WITH(resource.make_buffer(11, small), ReservationError, "holds 10 B");
    auto disk = resource.reserve(MemoryType::DISK, 10, AllowOverbooking::no);
    EXPECT_THROW_WITH(resource.make_buffer(1, disk), ReservationError, "needs a HOST reservation");
    auto foreign = other.reserve(MemoryType::HOST, 10, AllowOverbooking::no);
    EXPECT_THROW_WITH(resource.make_buffer(1, foreign), ReservationError, "of this BufferResource");
    MemoryReservation none;
    EXPECT_THROW_WITH(resource.make_buffer(0, none), ReservationError, "of this BufferResource");
    EXPECT_EQ(small.size(), 10U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
}

TEST(BufferResource, MakeBufferOfASizeNoAllocationCanHoldThrowsInsteadOfReturningNoBytes) {
    // Rounding SIZE_MAX - 100 up to the alignment wrapped to 0 bytes, and the
    // buffer came back with null data. No reservation holds that many bytes
    // any more; the largest one does, and no allocation can hold it either.
    BufferResource resource(host_limited(16 * mebibyte));
    EXPECT_THROW_WITH(
        resource.reserve(MemoryType::HOST, SIZE_MAX - 100, AllowOverbooking::yes), OutOfMemory, "HOST"
    );
    auto const size = BufferResource::max_committed_bytes;
    auto reservation = resource.reserve(MemoryType::HOST, size, AllowOverbooking::yes);
    auto const make = [&] {
        auto const buffer = resource.make_buffer(size, reservation);
        ADD_FAILURE() << "make_buffer returned a buffer whose data is "
                      << static_cast<void const*>(buffer.data().data());
    };
    EXPECT_THROW_WITH(make(), OutOfMemory, "HOST");
    EXPECT_EQ(reservation.size(), size) << "the reservation got its bytes back";
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
}

TEST(BufferResource, AllocationsAreRecordedInStatistics) {
    auto statistics = std::make_shared<Statistics>();
    BufferResource resource(host_limited(mebibyte), statistics);
    auto reservation = resource.reserve(MemoryType::HOST, 300, AllowOverbooking::no);
    auto first = resource.make_buffer(100, reservation);
    auto second = resource.make_buffer(200, reservation);
    auto const allocated = statistics->get("memory.allocate.bytes");
    ASSERT_TRUE(allocated.has_value());
    EXPECT_EQ(allocated->records, 2U);
    EXPECT_EQ(allocated->total, 300.0);
    EXPECT_EQ(&resource.statistics(), statistics.get());
}

TEST(BufferResource, ConcurrentReservationsNeverExceedTheLimit) {
    constexpr std::uint64_t limit = 1000;
    BufferResource resource(host_limited(limit));
    std::vector<std::thread> threads;
    std::vector<std::vector<MemoryReservation>> held(4);
    for (auto& mine : held) {
        threads.emplace_back([&] {
            for (int i = 0; i < 1000; ++i) {
                if (auto reservation = resource.try_reserve(MemoryType::HOST, 7); !reservation.empty()) {
                    mine.push_back(std::move(reservation));
                }
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    std::size_t total = 0;
    for (auto const& mine : held) {
        total += mine.size() * 7;
    }
    EXPECT_EQ(total, limit / 7 * 7);
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), total);
}

TEST(BufferResource, ReserveAndSpillReservesWithoutSpillingWhenThereIsRoom) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 4 * mebibyte));
    BufferPile pile(resource, 2, mebibyte);
    ScopedSpillFunction const spilling(resource, [&](std::size_t n) { return pile.spill(n); });
    auto reservation = resource.reserve_and_spill(MemoryType::HOST, 2 * mebibyte, AllowOverbooking::no);
    EXPECT_EQ(reservation.size(), 2 * mebibyte);
    EXPECT_EQ(pile.count(), 2U);
}

TEST(BufferResource, ReserveAndSpillSpillsWhatIsMissing) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 4 * mebibyte));
    BufferPile pile(resource, 4, mebibyte);
    ScopedSpillFunction const spilling(resource, [&](std::size_t n) { return pile.spill(n); });
    auto reservation = resource.reserve_and_spill(MemoryType::HOST, 3 * mebibyte, AllowOverbooking::no);
    EXPECT_EQ(reservation.size(), 3 * mebibyte);
    EXPECT_EQ(pile.count(), 1U);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), 0);
}

TEST(BufferResource, ReserveAndSpillFailsCleanlyWhenNotEnoughCanBeSpilled) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 4 * mebibyte));
    BufferPile pile(resource, 4, mebibyte);
    ScopedSpillFunction const spilling(resource, [&](std::size_t n) { return pile.spill(n); });
    EXPECT_THROW_WITH(
        resource.reserve_and_spill(MemoryType::HOST, 5 * mebibyte, AllowOverbooking::no), OutOfMemory,
        "even after spilling 4.00 MiB"
    );
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
    auto overbooked = resource.reserve_and_spill(MemoryType::HOST, 5 * mebibyte, AllowOverbooking::yes);
    EXPECT_EQ(overbooked.size(), 5 * mebibyte);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), -static_cast<std::int64_t>(mebibyte));
}

TEST(BufferResource, ZeroBytesAreReservedAtOnceWhileHostIsOverItsLimit) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, mebibyte));
    auto const over = resource.reserve(MemoryType::HOST, 2 * mebibyte, AllowOverbooking::yes);
    Watchdog watchdog("reserve_or_wait(0) while HOST is over its limit");
    EXPECT_EQ(resource.reserve_and_spill(MemoryType::HOST, 0, AllowOverbooking::no).size(), 0U);
    EXPECT_EQ(resource.reserve_or_wait(0).size(), 0U);
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 2 * mebibyte);
}

TEST(BufferResource, ReserveAndSpillOfDiskIsAPlainReservation) {
    TemporaryDirectory root;
    auto config = test_config(root);
    config.disk_limit = SizeSpec::bytes(100);
    BufferResource resource(config);
    EXPECT_EQ(resource.reserve_and_spill(MemoryType::DISK, 100, AllowOverbooking::no).size(), 100U);
    EXPECT_THROW_WITH(
        resource.reserve_and_spill(MemoryType::DISK, 101, AllowOverbooking::no), OutOfMemory, "max_spill_bytes"
    );
}

TEST(BufferResource, ConcurrentReserveAndSpillCallersNeverUnderSpill) {
    // Regression for the seed's last comment: with concurrent spilling, a
    // caller must not rely on bytes another caller spills for itself, or both
    // end up short and one runs out of memory. HOST is full, so each caller
    // must spill its own 3 MiB: the shared spill function holds every caller
    // until all four are inside it at once, which only a manager that lets
    // them spill concurrently allows (one big lock would leave the rendezvous
    // short, and the test fails).
    TemporaryDirectory root;
    constexpr int callers = 4;
    BufferResource resource(test_config(root, 16 * mebibyte));
    BufferPile pile(resource, 16, mebibyte);
    Rendezvous all_inside(callers);
    std::atomic<bool> met{true};
    std::atomic<int> calls{0};
    ScopedSpillFunction const spilling(
        resource,
        [&](std::size_t amount) {
            if (++calls <= callers && !all_inside.arrive_and_wait()) {
                met = false;
            }
            return pile.spill(amount);
        },
        0, SpillConcurrency::shared
    );
    Watchdog watchdog("concurrent reserve_and_spill");
    std::vector<std::thread> threads;
    std::vector<MemoryReservation> reservations(callers);
    for (int i = 0; i < callers; ++i) {
        threads.emplace_back([&, i] {
            reservations[i] = resource.reserve_and_spill(MemoryType::HOST, 3 * mebibyte, AllowOverbooking::no);
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    EXPECT_TRUE(met.load()) << "the callers did not spill at the same time";
    EXPECT_EQ(pile.count(), 16U - 3 * callers) << "spilled more or less than the callers needed";
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), 0);
}

TEST(BufferResource, AReserveAndSpillCallerClaimsOnlyItsOwnRequestSoOthersSpillBesideIt) {
    // HOST is 2 MiB over its limit by someone else's reservation when a caller
    // asks for 2 MiB more. It claims its own 2 MiB, not all 4, so a second
    // spiller takes the other half at the same time instead of waiting.
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 4 * mebibyte));
    BufferPile first_pile(resource, 2, mebibyte);
    BufferPile second_pile(resource, 2, mebibyte);
    auto const overbooked = resource.reserve(MemoryType::HOST, 2 * mebibyte, AllowOverbooking::yes);
    Event first_inside;
    Rendezvous both_spilling(2);
    std::atomic<int> met{0};
    auto const meeting = [&](BufferPile& pile) {
        return [&](std::size_t amount) {
            first_inside.set();
            met += both_spilling.arrive_and_wait() ? 1 : 0;
            return pile.spill(amount);
        };
    };
    ScopedSpillFunction const first(resource, meeting(first_pile), 1);
    ScopedSpillFunction const second(resource, meeting(second_pile), 0);
    MemoryReservation reservation;
    std::thread requester([&] {
        reservation = resource.reserve_and_spill(MemoryType::HOST, 2 * mebibyte, AllowOverbooking::no);
    });
    ASSERT_TRUE(first_inside.wait());
    auto const helped = resource.spill_manager().spill_to_make_headroom(0);
    requester.join();
    EXPECT_EQ(met, 2) << "the second spiller waited for the first, which had claimed the whole shortfall";
    EXPECT_EQ(helped.spilled, 2 * mebibyte);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), 0);
}

TEST(BufferResource, ReserveAndSpillEndsWhenASpillFunctionReportsBytesItDidNotFree) {
    // make_headroom trusted the count: it asked again and again, at full
    // speed, forever.
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 16 * mebibyte));
    auto const held = resource.reserve(MemoryType::HOST, 16 * mebibyte, AllowOverbooking::no);
    std::atomic<int> calls{0};
    ScopedSpillFunction const lying(resource, [&](std::size_t amount) {
        ++calls;
        return amount;
    });
    Watchdog watchdog("reserve_and_spill with a spill function that frees nothing");
    EXPECT_THROW_WITH(
        resource.reserve_and_spill(MemoryType::HOST, mebibyte, AllowOverbooking::no), OutOfMemory,
        "memory_limit_host"
    );
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(statistic(resource, "memory.spill.unfreed_reports"), 1.0);
    auto const overbooked = resource.reserve_and_spill(MemoryType::HOST, mebibyte, AllowOverbooking::yes);
    EXPECT_EQ(overbooked.size(), mebibyte);
    auto const result = resource.spill_manager().spill_to_make_headroom(0);
    EXPECT_FALSE(result.reached);
    EXPECT_EQ(result.spilled, 0U) << "bytes nobody freed were counted as spilled";
    EXPECT_EQ(calls, 3);
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 17 * mebibyte);
}

TEST(BufferResource, RejectsAnEmptySpillDirectory) {
    MemoryConfig config;
    config.spill_directory = "";
    EXPECT_THROW_WITH(BufferResource{config}, InvalidArgument, "spill_directory");
}

TEST(BufferResourceDeathTest, DestroyingTheResourceBeforeItsBuffersAborts) {
    EXPECT_DEATH(
        {
            auto resource = std::make_unique<BufferResource>(host_limited(100));
            auto reservation = resource->reserve(MemoryType::HOST, 10, AllowOverbooking::no);
            auto buffer = resource->make_buffer(10, reservation);
            resource.reset();
        },
        "destroyed while 10 bytes of HOST buffers"
    );
}

TEST(BufferResource, AdoptMovesABuffersBytesIntoAnotherResourceWithoutCopying) {
    BufferResource sender(host_limited(mebibyte));
    BufferResource receiver(host_limited(mebibyte));
    auto sent_reservation = sender.reserve(MemoryType::HOST, 5000, AllowOverbooking::no);
    auto buffer = sender.make_buffer(5000, sent_reservation);
    buffer.data()[4999] = std::byte{42};
    auto const* const bytes = buffer.data().data();

    {
        auto reservation = receiver.reserve(MemoryType::HOST, 6000, AllowOverbooking::no);
        auto adopted = receiver.adopt(std::move(buffer), reservation);
        EXPECT_EQ(adopted.data().data(), bytes);
        EXPECT_EQ(adopted.data()[4999], std::byte{42});
        EXPECT_EQ(buffer.size(), 0U);
        EXPECT_EQ(reservation.size(), 1000U);
        EXPECT_EQ(sender.memory_used(MemoryType::HOST), 0U);
        EXPECT_EQ(receiver.memory_used(MemoryType::HOST), 5000U);
        EXPECT_EQ(receiver.peak_memory_used(MemoryType::HOST), 5000U);
    }
    expect_all_tiers_at_zero(sender);
    expect_all_tiers_at_zero(receiver);
}

TEST(BufferResource, AdoptingABufferOfTheSameResourceKeepsItsPeak) {
    BufferResource resource(host_limited(mebibyte));
    auto reservation = resource.reserve(MemoryType::HOST, 200, AllowOverbooking::no);
    auto buffer = resource.make_buffer(100, reservation);
    auto adopted = resource.adopt(std::move(buffer), reservation);
    EXPECT_EQ(adopted.size(), 100U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 100U);
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
    EXPECT_EQ(resource.peak_memory_used(MemoryType::HOST), 100U);
}

TEST(BufferResource, AdoptRejectsMovedFromBuffersAndReservationsThatCannotPay) {
    BufferResource sender(host_limited(mebibyte));
    BufferResource receiver(host_limited(mebibyte));
    auto sent_reservation = sender.reserve(MemoryType::HOST, 100, AllowOverbooking::no);
    auto buffer = sender.make_buffer(100, sent_reservation);

    auto small = receiver.reserve(MemoryType::HOST, 99, AllowOverbooking::no);
    EXPECT_THROW_WITH(receiver.adopt(std::move(buffer), small), ReservationError, "holds 99 B");
    auto disk = receiver.reserve(MemoryType::DISK, 100, AllowOverbooking::no);
    EXPECT_THROW_WITH(receiver.adopt(std::move(buffer), disk), ReservationError, "needs a HOST reservation");
    auto foreign = sender.reserve(MemoryType::HOST, 100, AllowOverbooking::no);
    EXPECT_THROW_WITH(receiver.adopt(std::move(buffer), foreign), ReservationError, "of this BufferResource");
    EXPECT_EQ(buffer.size(), 100U);
    EXPECT_EQ(sender.memory_used(MemoryType::HOST), 100U);
    EXPECT_EQ(receiver.memory_used(MemoryType::HOST), 0U);

    auto enough = receiver.reserve(MemoryType::HOST, 100, AllowOverbooking::no);
    auto adopted = receiver.adopt(std::move(buffer), enough);
    EXPECT_THROW_WITH(receiver.adopt(std::move(buffer), enough), InvalidArgument, "moved from");
}
