#include <spillway/core/error.hpp>

#include <common/error_matchers.hpp>

#include <gtest/gtest.h>

using namespace spillway;

namespace {

int checked_half(int value) {
    SPILLWAY_EXPECTS(value % 2 == 0, "value must be even, got " << value, InvalidArgument);
    return value / 2;
}

}  // namespace

TEST(Error, EveryTypeIsASpillwayError) {
    EXPECT_THROW(throw OutOfMemory("x"), Error);
    EXPECT_THROW(throw ReservationError("x"), Error);
    EXPECT_THROW(throw IoError("x"), Error);
    EXPECT_THROW(throw CorruptData("x"), Error);
    EXPECT_THROW(throw InvalidArgument("x"), Error);
}

TEST(Error, ExpectsThrowsTheGivenTypeWithTheMessageAndLocation) {
    EXPECT_EQ(checked_half(4), 2);
    EXPECT_THROW_WITH(checked_half(3), InvalidArgument, "value must be even, got 3 (test_error.cpp:");
}

namespace {

[[noreturn]] void fail_with_io_error(int disk) {
    SPILLWAY_FAIL("disk " << disk << " is gone", IoError);
}

}  // namespace

TEST(Error, FailThrowsUnconditionally) {
    EXPECT_THROW_WITH(fail_with_io_error(7), IoError, "disk 7 is gone");
}

TEST(ErrorDeathTest, FatalPrintsTheMessageAndAborts) {
    EXPECT_DEATH(SPILLWAY_FATAL("cannot recover from " << 42), "spillway FATAL: cannot recover from 42");
}

TEST(ErrorDeathTest, AssertAbortsNamingTheBrokenInvariant) {
    int const reserved = 5;
    EXPECT_DEATH(SPILLWAY_ASSERT(reserved == 0, "bytes left: " << reserved),
                 "invariant broken: reserved == 0: bytes left: 5");
}
