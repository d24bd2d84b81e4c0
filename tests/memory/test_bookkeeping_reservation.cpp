#include <spillway/memory/bookkeeping_reservation.hpp>

#include <common/temporary_directory.hpp>

#include <gtest/gtest.h>

#include "memory_test_support.hpp"

using namespace spillway;
using namespace spillway::memory;
using namespace spillway::test;

namespace {

constexpr std::size_t step = BookkeepingReservation::step_bytes;

}  // namespace

TEST(BookkeepingReservation, ReservesWholeStepsThatCoverTheCount) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    BookkeepingReservation bookkeeping(resource);
    EXPECT_EQ(bookkeeping.size(), 0U);
    bookkeeping.cover(1);
    EXPECT_EQ(bookkeeping.size(), step);
    bookkeeping.cover(step);
    EXPECT_EQ(bookkeeping.size(), step);
    bookkeeping.cover(5 * step + 1);
    EXPECT_EQ(bookkeeping.size(), 6 * step);
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 6 * step) << "the steps are the resource's reservations";
}

TEST(BookkeepingReservation, KeepsOneStepOfSlackAndReturnsEverythingForNothing) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    BookkeepingReservation bookkeeping(resource);
    bookkeeping.cover(6 * step);
    bookkeeping.cover(5 * step);
    EXPECT_EQ(bookkeeping.size(), 6 * step) << "one step of slack is kept";
    bookkeeping.cover(6 * step);
    EXPECT_EQ(bookkeeping.size(), 6 * step) << "and serves the next growth";
    bookkeeping.cover(2 * step);
    EXPECT_EQ(bookkeeping.size(), 3 * step) << "beyond the slack, steps are returned";
    bookkeeping.cover(0);
    EXPECT_EQ(bookkeeping.size(), 0U);
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
}

TEST(BookkeepingReservation, OverbooksRatherThanSpillsOrFails) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 2 * step));
    BookkeepingReservation bookkeeping(resource);
    bookkeeping.cover(3 * step);
    EXPECT_EQ(bookkeeping.size(), 3 * step);
    EXPECT_LT(resource.memory_available(MemoryType::HOST), 0) << "the tier is over its limit until others spill";
}

TEST(BookkeepingReservation, DestroyingItReturnsItsSteps) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    {
        BookkeepingReservation bookkeeping(resource);
        bookkeeping.cover(10 * step);
        ASSERT_EQ(resource.memory_reserved(MemoryType::HOST), 10 * step);
    }
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
}
