#include <spillway/memory/host_allocator.hpp>

#include <common/temporary_directory.hpp>

#include <cstdint>
#include <thread>
#include <vector>

#include <spillway/memory/buffer_resource.hpp>

#include <gtest/gtest.h>

#include "memory_test_support.hpp"

using namespace spillway;
using namespace spillway::memory;

using spillway::test::BufferPile;
using spillway::test::expect_all_tiers_at_zero;
using spillway::test::mebibyte;
using spillway::test::ScopedSpillFunction;
using spillway::test::TemporaryDirectory;
using spillway::test::test_config;

namespace {

template <typename T>
using HostVector = std::vector<T, HostAllocator<T>>;

}  // namespace

TEST(HostAllocator, AContainerMadeInsideAScopeChargesItsResourceAtTheCapacityItOccupies) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    {
        ScopedHostResource const scope(&resource);
        HostVector<std::uint64_t> small(10);
        EXPECT_EQ(resource.memory_used(MemoryType::HOST), BufferResource::container_capacity(80));
        EXPECT_EQ(BufferResource::container_capacity(80), 96U);  // 80 bytes and an 8-byte header, in 16-byte steps
        HostVector<std::byte> large(100'000);
        // 100,000 bytes rounded up to the size class of 1.75 times 64 KiB.
        EXPECT_EQ(BufferResource::container_capacity(100'000), 114'688U);
        EXPECT_EQ(resource.memory_used(MemoryType::HOST), 96U + 114'688U);
    }
    expect_all_tiers_at_zero(resource);
}

TEST(HostAllocator, AContainerMadeOutsideAnyScopeChargesNoResource) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    HostVector<std::uint64_t> values(1000);
    EXPECT_EQ(values.get_allocator().resource(), nullptr);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
}

TEST(HostAllocator, ScopesNestAndRestoreTheResourceBeforeThem) {
    TemporaryDirectory root;
    BufferResource outer(test_config(root));
    BufferResource inner(test_config(root));
    ScopedHostResource const outer_scope(&outer);
    {
        ScopedHostResource const inner_scope(&inner);
        EXPECT_EQ(current_host_resource(), &inner);
        {
            ScopedHostResource const heap_scope(nullptr);
            EXPECT_EQ(current_host_resource(), nullptr);
        }
        EXPECT_EQ(current_host_resource(), &inner);
    }
    EXPECT_EQ(current_host_resource(), &outer);
    std::thread([] { EXPECT_EQ(current_host_resource(), nullptr); }).join();
}

TEST(HostAllocator, AMovedContainerKeepsChargingTheResourceThatHoldsItsStorage) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    HostVector<std::byte> moved;
    {
        ScopedHostResource const scope(&resource);
        HostVector<std::byte> values(4096);
        moved = std::move(values);
    }
    EXPECT_EQ(moved.get_allocator().resource(), &resource);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), BufferResource::container_capacity(4096));
    moved = HostVector<std::byte>();
    expect_all_tiers_at_zero(resource);
}

TEST(HostAllocator, ACopyChargesTheResourceCurrentWhereItIsMade) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    std::optional<HostVector<std::byte>> original;
    {
        ScopedHostResource const scope(&resource);
        original.emplace(4096);
    }
    HostVector<std::byte> const copy(*original);
    EXPECT_EQ(copy.get_allocator().resource(), nullptr);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), BufferResource::container_capacity(4096));
    original.reset();
    expect_all_tiers_at_zero(resource);
}

TEST(HostAllocator, LargeStorageIsPooledAndReusedLikeABuffersBlock) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    ScopedHostResource const scope(&resource);
    std::byte const* first = nullptr;
    {
        HostVector<std::byte> values(mebibyte);
        first = values.data();
    }
    EXPECT_EQ(resource.memory_pooled(), mebibyte);
    // A container of another size in the same size class takes the block over.
    HostVector<std::byte> const again(mebibyte - 100'000);
    EXPECT_EQ(again.data(), first);
    EXPECT_EQ(resource.memory_pooled(), 0U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), mebibyte);
}

TEST(HostAllocator, AllocatingPastTheLimitSpillsToMakeRoom) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 8 * mebibyte));
    BufferPile pile(resource, 8, mebibyte);
    ScopedSpillFunction const spill_function(resource, [&](std::size_t amount) { return pile.spill(amount); });
    ScopedHostResource const scope(&resource);
    HostVector<std::byte> const values(2 * mebibyte);
    EXPECT_EQ(pile.count(), 6U);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), 0);
}

TEST(HostAllocator, AllocatingPastTheLimitOverbooksWhenNothingCanBeSpilled) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, mebibyte));
    ScopedHostResource const scope(&resource);
    HostVector<std::byte> const values(2 * mebibyte);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), -static_cast<std::int64_t>(mebibyte));
}
