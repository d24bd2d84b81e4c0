#include <spillway/table/date32.hpp>
#include <spillway/table/timestamp.hpp>

#include <limits>
#include <random>
#include <string>

#include <gtest/gtest.h>

using namespace spillway::table;

namespace {

std::string format(std::int64_t ticks, DataType type) {
    char text[max_timestamp_chars];
    return std::string(text, format_timestamp(ticks, type, text));
}

/// The ticks of `text` as `type`, or nothing where either step refuses it.
std::optional<std::int64_t> ticks_of(std::string_view text, DataType type) {
    auto const parsed = parse_timestamp(text);
    return parsed ? timestamp_ticks(*parsed, type) : std::nullopt;
}

constexpr std::int64_t day_1995_03_15 = 9204;

}  // namespace

TEST(Timestamp, ReadsADateAndAClockWithASpaceOrAT) {
    auto const seconds = day_1995_03_15 * 86'400 + 13 * 3600 + 4 * 60 + 5;
    for (std::string_view const text : {"1995-03-15 13:04:05", "1995-03-15T13:04:05"}) {
        auto const parsed = parse_timestamp(text);
        ASSERT_TRUE(parsed.has_value()) << text;
        EXPECT_EQ(parsed->seconds, seconds);
        EXPECT_EQ(parsed->nanoseconds, 0u);
        EXPECT_EQ(parsed->fraction_digits, 0u);
        EXPECT_FALSE(parsed->has_zone);
    }
    EXPECT_EQ(ticks_of("1970-01-01 00:00:01", DataType::timestamp_ms), 1000);
    EXPECT_EQ(ticks_of("1969-12-31 23:59:59.999999", DataType::timestamp_us), -1);
    EXPECT_EQ(ticks_of("1969-12-31 23:59:59.000000001", DataType::timestamp_ns), -999'999'999);
}

TEST(Timestamp, AZoneOrOffsetGivesUtcAndOnlyAUtcTypeTakesIt) {
    auto const midnight = ticks_of("2024-01-02 00:00:00", DataType::timestamp_us_utc);
    ASSERT_TRUE(midnight.has_value());
    EXPECT_EQ(ticks_of("2024-01-02 00:00:00Z", DataType::timestamp_us_utc), midnight);
    EXPECT_EQ(ticks_of("2024-01-02 01:30:00+01:30", DataType::timestamp_us_utc), midnight);
    EXPECT_EQ(ticks_of("2024-01-02 01:30:00+0130", DataType::timestamp_us_utc), midnight);
    EXPECT_EQ(ticks_of("2024-01-01 22:00:00-02", DataType::timestamp_us_utc), midnight);
    EXPECT_EQ(ticks_of("2024-01-02 00:00:00", DataType::timestamp_us), midnight);
    EXPECT_EQ(ticks_of("2024-01-02 00:00:00Z", DataType::timestamp_us), std::nullopt);
    EXPECT_EQ(ticks_of("2024-01-02 00:00:00+00:00", DataType::timestamp_ns), std::nullopt);
}

TEST(Timestamp, AFractionFinerThanTheUnitIsRefusedUnlessItsDigitsAreZeros) {
    EXPECT_EQ(ticks_of("1970-01-01 00:00:00.123", DataType::timestamp_ms), 123);
    EXPECT_EQ(ticks_of("1970-01-01 00:00:00.123000000", DataType::timestamp_ms), 123);
    EXPECT_EQ(ticks_of("1970-01-01 00:00:00.1234", DataType::timestamp_ms), std::nullopt);
    EXPECT_EQ(ticks_of("1970-01-01 00:00:00.1234", DataType::timestamp_us), 123'400);
    EXPECT_EQ(ticks_of("1970-01-01 00:00:00.123456789", DataType::timestamp_us), std::nullopt);
    EXPECT_EQ(ticks_of("1970-01-01 00:00:00.123456789", DataType::timestamp_ns), 123'456'789);
}

TEST(Timestamp, TicksBeyondInt64AreRefused) {
    auto const latest = std::numeric_limits<std::int64_t>::max();
    auto const earliest = std::numeric_limits<std::int64_t>::min();
    EXPECT_EQ(ticks_of("2262-04-11 23:47:16.854775807", DataType::timestamp_ns), latest);
    EXPECT_EQ(ticks_of("2262-04-11 23:47:16.854775808", DataType::timestamp_ns), std::nullopt);
    EXPECT_EQ(ticks_of("1677-09-21 00:12:43.145224192", DataType::timestamp_ns), earliest);
    EXPECT_EQ(ticks_of("1677-09-21 00:12:43.145224191", DataType::timestamp_ns), std::nullopt);
    EXPECT_TRUE(ticks_of("3000-01-01 00:00:00", DataType::timestamp_us).has_value());
    EXPECT_EQ(ticks_of("3000-01-01 00:00:00", DataType::timestamp_ns), std::nullopt);
    // Years far beyond a date32's are read, for milliseconds.
    EXPECT_EQ(ticks_of("292278994-08-17 07:12:55.807", DataType::timestamp_ms), latest);
    EXPECT_EQ(ticks_of("292278994-08-17 07:12:55.808", DataType::timestamp_ms), std::nullopt);
    EXPECT_FALSE(parse_timestamp("1000000000-01-01 00:00:00").has_value()) << "a year of ten digits";
}

TEST(Timestamp, RefusesTextThatIsNotExactlyATimestamp) {
    for (std::string_view const text :
         {"1995-03-15", "1995-03-15 13:04", "1995-03-15 24:00:00", "1995-03-15 13:60:00", "1995-03-15 13:04:60",
          "1995-02-29 00:00:00", "1995-03-15  13:04:05", "1995-03-15 13:04:05.", "1995-03-15 13:04:05.1234567890",
          "1995-03-15 13:04:05 ", "1995-03-15 13:04:05z", "1995-03-15 13:04:05+1", "1995-03-15 13:04:05+24:00",
          "1995-03-15 13:04:05+01:60", "1995-03-15 13:4:05", "1995-03-15x13:04:05", " 1995-03-15 13:04:05",
          "1995-03-15 13:04:05+01:00:00", "user 1995-03-15 13:04:05"}) {
        EXPECT_FALSE(parse_timestamp(text).has_value()) << "'" << text << "'";
    }
}

TEST(Timestamp, FormatsWithTheUnitsDigitsOnlyWhenThereIsAFractionAndZForUtc) {
    EXPECT_EQ(format(0, DataType::timestamp_ms), "1970-01-01 00:00:00");
    EXPECT_EQ(format(-1, DataType::timestamp_ms), "1969-12-31 23:59:59.999");
    EXPECT_EQ(format(1'500'000, DataType::timestamp_us_utc), "1970-01-01 00:00:01.500000Z");
    EXPECT_EQ(format(1, DataType::timestamp_ns), "1970-01-01 00:00:00.000000001");
    EXPECT_EQ(format(std::numeric_limits<std::int64_t>::min(), DataType::timestamp_ns_utc),
              "1677-09-21 00:12:43.145224192Z");
    EXPECT_EQ(format(std::numeric_limits<std::int64_t>::max(), DataType::timestamp_us), "294247-01-10 04:00:54.775807");
    EXPECT_EQ(format(std::numeric_limits<std::int64_t>::min(), DataType::timestamp_ms),
              "-292275055-05-16 16:47:04.192");
}

TEST(Timestamp, WhatIsFormattedReadsBackExactlyInEveryUnit) {
    std::mt19937_64 random(7);
    for (auto const type : {DataType::timestamp_ms, DataType::timestamp_us, DataType::timestamp_ns,
                            DataType::timestamp_ms_utc, DataType::timestamp_us_utc, DataType::timestamp_ns_utc}) {
        std::uniform_int_distribution<std::int64_t> draw(std::numeric_limits<std::int64_t>::min(),
                                                         std::numeric_limits<std::int64_t>::max());
        for (int index = 0; index < 20'000; ++index) {
            auto const ticks = index < 3   ? std::int64_t{index - 1}
                             : index == 3 ? std::numeric_limits<std::int64_t>::min()
                             : index == 4 ? std::numeric_limits<std::int64_t>::max()
                                          : draw(random);
            auto const text = format(ticks, type);
            ASSERT_EQ(ticks_of(text, type), ticks) << text << " as " << to_string(type);
        }
    }
}

TEST(Timestamp, MicrosecondsAreOneFormForEveryUnitRoundedDown) {
    EXPECT_EQ(timestamp_microseconds(1'234, DataType::timestamp_ms), 1'234'000);
    EXPECT_EQ(timestamp_microseconds(1'234, DataType::timestamp_us_utc), 1'234);
    EXPECT_EQ(timestamp_microseconds(1'234'567, DataType::timestamp_ns), 1'234);
    EXPECT_EQ(timestamp_microseconds(-1, DataType::timestamp_ns), -1);
    EXPECT_EQ(timestamp_microseconds(std::numeric_limits<std::int64_t>::max(), DataType::timestamp_ms),
              std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(timestamp_microseconds(std::numeric_limits<std::int64_t>::min(), DataType::timestamp_ms_utc),
              std::numeric_limits<std::int64_t>::min());
    // The earliest whole microseconds, as text: not beyond int64, so not its limit.
    auto const earliest = parse_timestamp("-290308-12-21 19:59:05.224192");
    ASSERT_TRUE(earliest.has_value());
    EXPECT_EQ(timestamp_microseconds(*earliest), std::numeric_limits<std::int64_t>::min());
    auto const next = parse_timestamp("-290308-12-21 19:59:05.225");
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(timestamp_microseconds(*next), timestamp_microseconds(-9'223'372'036'854'775, DataType::timestamp_ms));
    EXPECT_EQ(timestamp_microseconds(*next), std::numeric_limits<std::int64_t>::min() + 808);
    auto const text = parse_timestamp("1969-12-31 23:59:59.9999999");
    ASSERT_TRUE(text.has_value());
    EXPECT_EQ(timestamp_microseconds(*text), -1);
    EXPECT_EQ(timestamp_microseconds(*text), timestamp_microseconds(-100, DataType::timestamp_ns));
}
