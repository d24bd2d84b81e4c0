#include <spillway/table/date32.hpp>

#include <limits>
#include <string>

#include <gtest/gtest.h>

using namespace spillway::table;

namespace {

std::string format(std::int32_t days) {
    char text[max_date32_chars];
    return std::string(text, format_date32(days, text));
}

}  // namespace

TEST(Date32, CountsDaysFromTheUnixEpoch) {
    EXPECT_EQ(to_date32({1970, 1, 1}), 0);
    EXPECT_EQ(to_date32({1969, 12, 31}), -1);
    EXPECT_EQ(to_date32({2000, 3, 1}), 11017);
    EXPECT_EQ(to_date32({1992, 1, 1}), 8035);
    EXPECT_EQ(to_civil(11016), (CivilDate{2000, 2, 29}));
}

TEST(Date32, CivilConversionRoundTripsOverCenturies) {
    for (std::int32_t days = -800'000; days <= 800'000; days += 37) {
        ASSERT_EQ(to_date32(to_civil(days)), days);
    }
}

TEST(Date32, ParsesAndFormatsIsoDates) {
    EXPECT_EQ(parse_date32("1995-06-17"), to_date32({1995, 6, 17}));
    EXPECT_EQ(format(to_date32({1995, 6, 17})), "1995-06-17");
    EXPECT_EQ(format(to_date32({7, 1, 2})), "0007-01-02");
    EXPECT_EQ(format(to_date32({-44, 3, 15})), "-0044-03-15");
    EXPECT_EQ(parse_date32("-0044-03-15"), to_date32({-44, 3, 15}));
    EXPECT_EQ(parse_date32("12345-12-31"), to_date32({12345, 12, 31}));
    for (std::int32_t days = -1'000'000; days <= 1'000'000; days += 997) {
        ASSERT_EQ(parse_date32(format(days)), days) << format(days);
    }
}

TEST(Date32, RejectsTextThatIsNotAValidDate) {
    for (auto const text : {"", "1995-6-17", "1995-06-1", "95-06-17", "1995/06/17", "1995-13-01", "1995-00-10",
                            "1995-02-29", "1995-04-31", "1995-06-17 ", " 1995-06-17", "199a-06-17", "+1995-06-17",
                            "99999999-01-01"}) {
        EXPECT_FALSE(parse_date32(text).has_value()) << text;
    }
    EXPECT_TRUE(parse_date32("1996-02-29").has_value());
}

TEST(Date32, DaysReachBeyondADate32ForYearsOfUpToNineDigits) {
    EXPECT_EQ(parse_days("99999999-01-01"), days_from_civil({99'999'999, 1, 1}));
    EXPECT_EQ(parse_days("-999999999-12-31"), days_from_civil({-999'999'999, 12, 31}));
    EXPECT_EQ(parse_days("0000999999999-12-31"), days_from_civil({999'999'999, 12, 31}));
    EXPECT_FALSE(parse_days("1000000000-01-01").has_value());
    EXPECT_FALSE(parse_days("99999999999999999999-01-01").has_value());
    EXPECT_EQ(parse_days("1995-06-17"), std::int64_t{parse_date32("1995-06-17").value()});
    EXPECT_EQ(to_civil(days_from_civil({-999'999'999, 12, 31})), (CivilDate{-999'999'999, 12, 31}));
}

TEST(Date32, EveryDate32FormatsAndParsesBackUpToTheEndsOfItsRange) {
    constexpr auto lowest = std::numeric_limits<std::int32_t>::min();
    constexpr auto highest = std::numeric_limits<std::int32_t>::max();
    for (auto const days : {lowest, lowest + 1, -2'000'000'000, 2'000'000'000, highest - 1, highest}) {
        EXPECT_EQ(parse_date32(format(days)), days) << format(days);
    }
    EXPECT_EQ(format(highest), "5881580-07-11");
    EXPECT_EQ(format(lowest), "-5877641-06-23");
    EXPECT_FALSE(parse_date32("5881580-07-12").has_value()) << "a day past the range";
    EXPECT_FALSE(parse_date32("-5877641-06-22").has_value()) << "a day before the range";
}
