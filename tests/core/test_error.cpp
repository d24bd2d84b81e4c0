#include <spillway/core/error.hpp>

#include <string>
#include <vector>

#include <spillway/core/logging.hpp>

#include <common/error_matchers.hpp>

#include <gmock/gmock.h>
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

TEST(Error, ExpectsThrowsTheGivenTypeWithTheMessageAndLogsTheLocationForDevelopers) {
    EXPECT_EQ(checked_half(4), 2);
    std::vector<std::string> logged;
    auto const previous_level = log_level();
    set_log_level(LogLevel::debug);
    auto previous_sink = set_log_sink([&](LogLevel, std::string_view text) { logged.emplace_back(text); });
    std::string message;
    try {
        static_cast<void>(checked_half(3));
    } catch (InvalidArgument const& error) {
        message = error.what();
    }
    set_log_sink(std::move(previous_sink));
    set_log_level(previous_level);
    EXPECT_EQ(message, "value must be even, got 3") << "users see no source location";
    ASSERT_EQ(logged.size(), 1u);
    EXPECT_THAT(logged[0], testing::HasSubstr("value must be even, got 3 (test_error.cpp:"));
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
