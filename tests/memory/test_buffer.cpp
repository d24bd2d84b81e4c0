#include <spillway/memory/buffer.hpp>

#include <common/error_matchers.hpp>

#include <spillway/core/error.hpp>

#include <algorithm>
#include <utility>

#include <spillway/memory/buffer_resource.hpp>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::memory;

TEST(Buffer, KnowsItsTierAndSizeAndHoldsWritableBytes) {
    BufferResource resource;
    auto reservation = resource.reserve(MemoryType::HOST, 100, AllowOverbooking::no);
    auto buffer = resource.make_buffer(100, reservation);
    EXPECT_EQ(buffer.mem_type(), MemoryType::HOST);
    EXPECT_EQ(buffer.size(), 100U);
    std::ranges::fill(buffer.data(), std::byte{7});
    auto const& view = std::as_const(buffer);
    EXPECT_TRUE(std::ranges::all_of(view.data(), [](std::byte b) { return b == std::byte{7}; }));
}

TEST(Buffer, AMovedFromBufferIsEmptyAndTheBytesAreCountedOnce) {
    BufferResource resource;
    auto reservation = resource.reserve(MemoryType::HOST, 100, AllowOverbooking::no);
    auto first = resource.make_buffer(100, reservation);
    Buffer second(std::move(first));
    EXPECT_EQ(first.size(), 0U);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    EXPECT_EQ(second.size(), 100U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 100U);
}

TEST(Buffer, AssigningOverABufferFreesItsBytes) {
    BufferResource resource;
    auto reservation = resource.reserve(MemoryType::HOST, 300, AllowOverbooking::no);
    auto first = resource.make_buffer(100, reservation);
    auto second = resource.make_buffer(200, reservation);
    first = std::move(second);
    EXPECT_EQ(first.size(), 200U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 200U);
}

TEST(Buffer, AnEmptyBufferHasNoBytes) {
    BufferResource resource;
    MemoryReservation reservation = resource.try_reserve(MemoryType::HOST, 0);
    auto buffer = resource.make_buffer(0, reservation);
    EXPECT_TRUE(buffer.data().empty());
}
