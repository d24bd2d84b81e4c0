// The blocks of freed HOST buffers that a BufferResource keeps for reuse,
// tested through the resource: which blocks are kept, which are reused, and
// the bound the HOST limit puts on them.
#include <spillway/memory/buffer_resource.hpp>

#include <common/fault_injecting_file_operations.hpp>
#include <common/rendezvous.hpp>
#include <common/temporary_directory.hpp>
#include <common/watchdog.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include "memory_test_support.hpp"

using namespace spillway;
using namespace spillway::memory;

using spillway::test::expect_all_tiers_at_zero;
using spillway::test::FaultInjectingFileOperations;
using spillway::test::host_buffer;
using spillway::test::mebibyte;
using spillway::test::Rendezvous;
using spillway::test::statistic;
using spillway::test::TemporaryDirectory;
using spillway::test::test_config;
using spillway::test::Watchdog;

namespace {

/// Makes HOST buffers of `sizes` MiB, all alive at once, then frees them, so
/// that their blocks are pooled.
void make_and_free(BufferResource& resource, std::initializer_list<std::uint64_t> sizes) {
    std::vector<Buffer> buffers;
    for (auto const size : sizes) {
        buffers.push_back(host_buffer(resource, size * mebibyte));
    }
}

/// The HOST bytes the resource holds in buffers and pooled blocks.
std::uint64_t held(BufferResource const& resource) {
    return resource.memory_used(MemoryType::HOST) + resource.memory_pooled();
}

/// Runs `threads` threads, thread t making and freeing a HOST buffer of
/// `size_of(t, i)` bytes for each i below `iterations` (skipping those HOST
/// has no room for), and returns the most the resource `held` while they ran,
/// sampled from another thread: the bound must hold throughout, not only
/// once they are done. The two counters are read one after the other, so a
/// block each thread moves between them meanwhile may count twice.
std::uint64_t most_held_while_making(BufferResource& resource, std::size_t threads, std::size_t iterations,
                                     std::function<std::size_t(std::size_t, std::size_t)> const& size_of) {
    std::atomic<bool> running{true};
    std::atomic<std::uint64_t> samples{0};
    std::uint64_t most_held = 0;
    std::thread sampler([&] {
        while (running.load()) {
            most_held = std::max(most_held, held(resource));
            ++samples;
        }
    });
    std::vector<std::thread> makers;
    for (std::size_t thread = 0; thread < threads; ++thread) {
        makers.emplace_back([&, thread] {
            for (std::size_t i = 0; i < iterations; ++i) {
                if (i == iterations / 2) {
                    // Halfway, wait for a whole sample: on a loaded machine
                    // the sampler could otherwise miss every thread's work.
                    auto const seen = samples.load();
                    while (samples.load() < seen + 2) {
                        std::this_thread::yield();
                    }
                }
                auto const size = size_of(thread, i);
                auto reservation = resource.try_reserve(MemoryType::HOST, size);
                if (!reservation.empty()) {
                    auto buffer = resource.make_buffer(size, reservation);
                    buffer.data().front() = std::byte{1};
                }
            }
        });
    }
    for (auto& maker : makers) {
        maker.join();
    }
    running = false;
    sampler.join();
    return most_held;
}

}  // namespace

TEST(HostBlockPool, AFreedBlockIsReusedByTheNextBufferOfTheSameCapacityWithItsPaddingZeroed) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, 64 * mebibyte));
    std::byte const* block = nullptr;
    {
        auto buffer = host_buffer(resource, 4 * mebibyte);
        std::fill(buffer.data().begin(), buffer.data().end(), std::byte{0xab});
        block = buffer.data().data();
    }
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
    EXPECT_EQ(resource.memory_pooled(), 4 * mebibyte);

    // 100 bytes less rounds up to the same 1024 pages of 4 KiB.
    auto const reused = host_buffer(resource, 4 * mebibyte - 100);
    EXPECT_EQ(reused.data().data(), block);
    EXPECT_EQ(resource.memory_pooled(), 0U);
    EXPECT_EQ(statistic(resource, "memory.host.blocks_reused"), 1.0);
    std::span<std::byte const> const tail(reused.data().data() + reused.size(), 100);
    EXPECT_TRUE(std::all_of(tail.begin(), tail.end(), [](std::byte b) { return b == std::byte{0}; }));
}

TEST(HostBlockPool, AShorterBufferTakesTheHeadOfALargerBlockAndItsTailStaysPooledWithItsPages) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, 64 * mebibyte));
    std::byte* block = nullptr;
    {
        auto buffer = host_buffer(resource, 4 * mebibyte);
        std::fill(buffer.data().begin(), buffer.data().end(), std::byte{0xab});
        block = buffer.data().data();
    }

    auto const shorter = host_buffer(resource, 3 * mebibyte - 100);
    EXPECT_EQ(shorter.data().data(), block);
    EXPECT_EQ(statistic(resource, "memory.host.blocks_reused"), 1.0);
    EXPECT_EQ(resource.memory_pooled(), mebibyte);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 3 * mebibyte - 100);
    std::span<std::byte const> const padding(shorter.data().data() + shorter.size(), 100);
    EXPECT_TRUE(std::all_of(padding.begin(), padding.end(), [](std::byte b) { return b == std::byte{0}; }));

    // The tail is the next buffer's block, with the pages written before.
    auto const tail = host_buffer(resource, mebibyte);
    EXPECT_EQ(tail.data().data(), block + 3 * mebibyte);
    EXPECT_EQ(statistic(resource, "memory.host.blocks_reused"), 2.0);
    EXPECT_EQ(resource.memory_pooled(), 0U);
    EXPECT_EQ(tail.data().front(), std::byte{0xab});
}

TEST(HostBlockPool, ATailShorterThan64KibibytesGoesBackToTheSystem) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, 64 * mebibyte));
    std::byte const* block = host_buffer(resource, 4 * mebibyte).data().data();

    auto const shorter = host_buffer(resource, 4 * mebibyte - 32 * 1024);
    EXPECT_EQ(shorter.data().data(), block);
    EXPECT_EQ(resource.memory_pooled(), 0U);
    unsigned char resident = 0;
    EXPECT_EQ(mincore(const_cast<std::byte*>(block) + 4 * mebibyte - 32 * 1024, host_buffer_alignment, &resident),
              -1)
        << "the 32 KiB past the shorter buffer are still mapped";
    EXPECT_EQ(errno, ENOMEM);
}

TEST(HostBlockPool, ALongerBufferTakesASmallerBlockLengthenedKeepingItsPages) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, 64 * mebibyte));
    {
        auto buffer = host_buffer(resource, mebibyte);
        std::fill(buffer.data().begin(), buffer.data().end(), std::byte{0xab});
    }
    auto longer = host_buffer(resource, 4 * mebibyte + 1);
    EXPECT_EQ(statistic(resource, "memory.host.blocks_reused"), 1.0);
    EXPECT_EQ(resource.memory_pooled(), 0U);
    // The first mebibyte is the old block's pages, as its old contents show;
    // the buffer is then usable to its end, and its padding is zeroed.
    EXPECT_EQ(longer.data()[mebibyte - 1], std::byte{0xab});
    std::fill(longer.data().begin(), longer.data().end(), std::byte{0xcd});
    std::span<std::byte const> const padding(longer.data().data() + longer.size(), host_buffer_alignment - 1);
    EXPECT_TRUE(std::all_of(padding.begin(), padding.end(), [](std::byte b) { return b == std::byte{0}; }));
}

TEST(HostBlockPool, ABufferTakesThePooledBlockOfItsOwnCapacityWhenThereIsOne) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, 64 * mebibyte));
    std::byte const* four = nullptr;
    {
        auto two = host_buffer(resource, 2 * mebibyte);
        auto buffer = host_buffer(resource, 4 * mebibyte);
        auto five = host_buffer(resource, 5 * mebibyte);
        four = buffer.data().data();
    }
    auto const again = host_buffer(resource, 4 * mebibyte);
    EXPECT_EQ(again.data().data(), four);
    EXPECT_EQ(resource.memory_pooled(), 7 * mebibyte);  // the others as they were
}

TEST(HostBlockPool, BlocksSmallerThan64KibibytesAreLeftToTheCLibrary) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, 64 * mebibyte));
    constexpr std::uint64_t smallest_pooled = std::uint64_t{64} << 10;
    host_buffer(resource, smallest_pooled - host_buffer_alignment);
    EXPECT_EQ(resource.memory_pooled(), 0U);
    host_buffer(resource, smallest_pooled);
    EXPECT_EQ(resource.memory_pooled(), smallest_pooled);
    // Blocks between that and a huge page are pooled and reused too: the
    // resource maps such blocks on their own and unmaps them when freed.
    auto const reused = host_buffer(resource, smallest_pooled);
    EXPECT_EQ(statistic(resource, "memory.host.blocks_reused"), 1.0);
    EXPECT_EQ(resource.memory_pooled(), 0U);
}

TEST(HostBlockPool, BlocksFreedFromThePoolGoBackToTheSystem) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, 64 * mebibyte));
    // Once glibc has unmapped a freed block of a mebibyte, it would carve the
    // next one out of its heap, and keep its pages when it is freed in turn.
    for (std::size_t size : {mebibyte, mebibyte - host_buffer_alignment}) {
        void* block = host_buffer(resource, size).data().data();
        resource.release_pooled_memory();
        unsigned char resident = 0;
        EXPECT_EQ(mincore(block, host_buffer_alignment, &resident), -1) << size << " bytes still mapped";
        EXPECT_EQ(errno, ENOMEM);
    }
}

TEST(HostBlockPool, PooledBlocksAndBuffersTogetherStayWithinTheLimit) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, 16 * mebibyte));
    make_and_free(resource, {4, 4, 4, 4});
    EXPECT_EQ(resource.memory_pooled(), 16 * mebibyte);

    // No pooled block is 8 MiB long: one is lengthened, and another freed to
    // make room for the pages it gains.
    auto const large = host_buffer(resource, 8 * mebibyte);
    EXPECT_EQ(resource.memory_pooled(), 8 * mebibyte);
    EXPECT_EQ(held(resource), 16 * mebibyte);
    auto const reused = host_buffer(resource, 4 * mebibyte);
    EXPECT_EQ(statistic(resource, "memory.host.blocks_reused"), 2.0);
    EXPECT_EQ(held(resource), 16 * mebibyte);
}

TEST(HostBlockPool, ALongerBufferMakesRoomByFreeingAsFewPooledBytesAsItCan) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, 16 * mebibyte));
    make_and_free(resource, {8, 2, 2, 4});
    EXPECT_EQ(resource.memory_pooled(), 16 * mebibyte);

    // No pooled block is 9 MiB long, so the largest is lengthened; that
    // leaves room for 7 MiB pooled: freeing one 2 MiB block is enough.
    auto const longer = host_buffer(resource, 9 * mebibyte);
    EXPECT_EQ(resource.memory_pooled(), 6 * mebibyte);
    EXPECT_EQ(held(resource), 15 * mebibyte);
    auto const small = host_buffer(resource, 2 * mebibyte);
    auto const medium = host_buffer(resource, 4 * mebibyte);
    EXPECT_EQ(statistic(resource, "memory.host.blocks_reused"), 3.0);
    EXPECT_EQ(resource.memory_pooled(), 0U);
}

TEST(HostBlockPool, SmallBuffersMakeRoomByFreeingPooledBlocks) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, 16 * mebibyte));
    make_and_free(resource, {4, 4, 4, 4});
    ASSERT_EQ(resource.memory_pooled(), 16 * mebibyte);

    // Buffers too small for a pooled block do not come from the pool, but
    // they take room from it all the same, and so does what is reserved
    // beside them.
    constexpr std::size_t small_size = std::size_t{32} << 10;  // 64 of them: 2 MiB
    auto const reserved = resource.reserve(MemoryType::HOST, 6 * mebibyte, AllowOverbooking::no);
    std::vector<Buffer> small;
    for (int i = 0; i < 64; ++i) {
        small.push_back(host_buffer(resource, small_size));
        EXPECT_LE(held(resource) + resource.memory_reserved(MemoryType::HOST), 16 * mebibyte) << i;
    }
    EXPECT_EQ(resource.memory_pooled(), 8 * mebibyte);

    auto overbooked = resource.reserve(MemoryType::HOST, 10 * mebibyte, AllowOverbooking::yes);
    auto const buffer = resource.make_buffer(small_size, overbooked);
    EXPECT_EQ(resource.memory_pooled(), 0U);
}

TEST(HostBlockPool, BuffersThatOverbookTheLimitLeaveNoRoomForPooledBlocks) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, 4 * mebibyte));
    auto first = host_buffer(resource, 4 * mebibyte, AllowOverbooking::yes);
    auto second = host_buffer(resource, 4 * mebibyte, AllowOverbooking::yes);
    {
        Buffer const freed(std::move(first));
    }
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 4 * mebibyte);
    EXPECT_EQ(resource.memory_pooled(), 0U);
    {
        Buffer const freed(std::move(second));
    }
    EXPECT_EQ(resource.memory_pooled(), 4 * mebibyte);
}

TEST(HostBlockPool, LoweringTheLimitFreesThePooledBlocksThatNoLongerFit) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, 16 * mebibyte));
    make_and_free(resource, {4, 4, 4, 4});
    resource.set_memory_limit(MemoryType::HOST, SizeSpec::bytes(8 * mebibyte));
    EXPECT_EQ(resource.memory_pooled(), 8 * mebibyte);
    resource.release_pooled_memory();
    EXPECT_EQ(resource.memory_pooled(), 0U);
}

TEST(HostBlockPool, PoolingCanBeTurnedOff) {
    TemporaryDirectory const root;
    auto config = test_config(root, 64 * mebibyte);
    config.pool_host_blocks = false;
    BufferResource resource(config);
    host_buffer(resource, 4 * mebibyte);
    host_buffer(resource, 4 * mebibyte);
    EXPECT_EQ(resource.memory_pooled(), 0U);
    EXPECT_EQ(statistic(resource, "memory.host.blocks_reused"), 0.0);
}

TEST(HostBlockPool, ASpilledBufferLeavesItsBlockForTheReadBack) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, 64 * mebibyte));
    auto const bytes = test::test_bytes(4 * mebibyte, 7);
    auto buffer = test::make_host_buffer(resource, bytes);
    auto const* const block = buffer.data().data();

    auto spilled = test::move_to(resource, std::move(buffer), MemoryType::DISK);
    EXPECT_EQ(resource.memory_pooled(), 4 * mebibyte);

    auto const back = test::move_to(resource, std::move(spilled), MemoryType::HOST);
    EXPECT_EQ(back.data().data(), block);
    EXPECT_EQ(test::contents(back), bytes);
    EXPECT_EQ(statistic(resource, "memory.host.blocks_reused"), 1.0);
}

TEST(HostBlockPool, AnAdoptedBlockIsPooledByTheResourceThatFreesIt) {
    TemporaryDirectory const root;
    BufferResource sender(test_config(root, 64 * mebibyte));
    BufferResource receiver(test_config(root, 64 * mebibyte));
    auto buffer = host_buffer(sender, 4 * mebibyte);
    {
        auto reservation = receiver.reserve(MemoryType::HOST, buffer.size(), AllowOverbooking::no);
        auto const adopted = receiver.adopt(std::move(buffer), reservation);
    }
    EXPECT_EQ(sender.memory_pooled(), 0U);
    EXPECT_EQ(receiver.memory_pooled(), 4 * mebibyte);
}

TEST(HostBlockPool, ThreadsMakingAndFreeingBuffersAtOnceReuseBlocksWithinTheLimit) {
    constexpr std::uint64_t limit = 24 * mebibyte;
    constexpr std::uint64_t largest = 4 * mebibyte;
    constexpr std::size_t threads = 4;
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, limit));
    // Two sizes, so that blocks are reused and also freed for new ones.
    auto const most_held = most_held_while_making(resource, threads, 200, [](std::size_t thread, std::size_t) {
        return (2 + 2 * (thread % 2)) * mebibyte;
    });
    expect_all_tiers_at_zero(resource);
    EXPECT_GT(most_held, 0U) << "the sampler saw the threads at work";
    EXPECT_LE(most_held, limit + threads * largest);  // a block of double counting per thread
    EXPECT_LE(resource.memory_pooled(), limit);
    EXPECT_GT(statistic(resource, "memory.host.blocks_reused"), 0.0);
}

TEST(HostBlockPool, BlocksOfSizesNeverAskedForAgainArePooledOnlyWithinTheLimit) {
    // Each thread makes buffers of growing sizes, so that no pooled block
    // fits a later request: only the pool's bound keeps the blocks it keeps
    // from growing past the limit.
    constexpr std::uint64_t limit = 24 * mebibyte;
    constexpr std::size_t steps = 200;
    constexpr std::size_t step = std::size_t{16} << 10;
    constexpr std::uint64_t largest = mebibyte + steps * step;
    constexpr std::size_t threads = 4;
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, limit));
    auto const most_held = most_held_while_making(resource, threads, steps, [](std::size_t, std::size_t i) {
        return mebibyte + i * step;
    });
    EXPECT_GT(resource.memory_pooled(), 0U) << "blocks were pooled";
    EXPECT_LE(most_held, limit + threads * largest);  // a block of double counting per thread
    EXPECT_LE(resource.memory_pooled(), limit);
}

TEST(HostBlockPool, TwoReadBacksAtOnceLeavePooledBlocksNoRoomBeyondTheLimit) {
    // Each read-back takes its HOST block, then reads into it: two of them
    // at once, both holding a block while they read, must each leave room in
    // the pool for the other's block as well as for its own.
    constexpr std::uint64_t limit = 24 * mebibyte;
    TemporaryDirectory const root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    auto config = test::faulty_config(root, operations);
    config.host_limit = SizeSpec::bytes(limit);
    BufferResource resource(config);
    auto first = test::move_to(resource, host_buffer(resource, 8 * mebibyte), MemoryType::DISK);
    auto second = test::move_to(resource, host_buffer(resource, 8 * mebibyte), MemoryType::DISK);
    resource.release_pooled_memory();
    make_and_free(resource, {4, 4, 4, 4});  // blocks no read-back can take over
    ASSERT_EQ(resource.memory_pooled(), 16 * mebibyte);

    Rendezvous reading(2);
    std::atomic<bool> met{true};
    operations->before_read([&] {
        if (!reading.arrive_and_wait()) {
            met = false;
        }
    });
    Watchdog const watchdog("two read-backs");
    auto const read_back = [&resource](Buffer& buffer) {
        buffer = test::move_to(resource, std::move(buffer), MemoryType::HOST);
    };
    std::thread one(read_back, std::ref(first));
    std::thread two(read_back, std::ref(second));
    one.join();
    two.join();
    operations->before_read({});
    ASSERT_TRUE(met) << "the read-backs did not overlap, so the test proved nothing";
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 16 * mebibyte);
    EXPECT_LE(held(resource), limit);
}

#if defined(__SANITIZE_ADDRESS__)
TEST(HostBlockPoolDeathTest, UnderAddressSanitizerAPooledBlockIsPoisonedUntilItIsReused) {
    TemporaryDirectory const root;
    BufferResource resource(test_config(root, 64 * mebibyte));
    std::byte* block = nullptr;
    {
        auto buffer = host_buffer(resource, 4 * mebibyte);
        block = buffer.data().data();
    }
    ASSERT_EQ(resource.memory_pooled(), 4 * mebibyte);
    EXPECT_TRUE(__asan_address_is_poisoned(block));
    EXPECT_TRUE(__asan_address_is_poisoned(block + 4 * mebibyte - 1));
    // A freed buffer's bytes, read through a pointer kept too long.
    EXPECT_DEATH(static_cast<void>(*static_cast<std::byte volatile*>(block)), "use-after-poison");

    auto const reused = host_buffer(resource, 4 * mebibyte);
    ASSERT_EQ(reused.data().data(), block);
    EXPECT_EQ(__asan_region_is_poisoned(block, 4 * mebibyte), nullptr);
}
#endif
