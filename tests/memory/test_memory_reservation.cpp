#include <spillway/memory/memory_reservation.hpp>

#include <utility>

#include <spillway/memory/buffer_resource.hpp>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::memory;

TEST(MemoryReservation, ADefaultReservationIsEmptyAndBelongsToNoResource) {
    MemoryReservation reservation;
    EXPECT_TRUE(reservation.empty());
    EXPECT_EQ(reservation.resource(), nullptr);
}

TEST(MemoryReservation, MovingAReservationTransfersItsBytes) {
    BufferResource resource;
    auto first = resource.reserve(MemoryType::HOST, 64, AllowOverbooking::no);
    MemoryReservation second(std::move(first));
    EXPECT_EQ(second.size(), 64U);
    EXPECT_EQ(second.resource(), &resource);
    EXPECT_TRUE(first.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 64U);
}

TEST(MemoryReservation, AssigningOverAReservationReturnsItsBytes) {
    BufferResource resource;
    auto first = resource.reserve(MemoryType::HOST, 64, AllowOverbooking::no);
    auto second = resource.reserve(MemoryType::DISK, 32, AllowOverbooking::no);
    first = std::move(second);
    EXPECT_EQ(first.mem_type(), MemoryType::DISK);
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
    EXPECT_EQ(resource.memory_reserved(MemoryType::DISK), 32U);
}

TEST(MemoryReservation, DestroyingAReservationReturnsWhatIsLeftOfIt) {
    BufferResource resource;
    {
        auto reservation = resource.reserve(MemoryType::HOST, 64, AllowOverbooking::no);
        auto buffer = resource.make_buffer(24, reservation);
        EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 40U);
    }
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
}
