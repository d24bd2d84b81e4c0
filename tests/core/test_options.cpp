#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>

#include <common/error_matchers.hpp>

#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace spillway;
using namespace std::chrono_literals;

TEST(ParseBytes, AcceptsBinaryAndDecimalUnitsInAnyCase) {
    EXPECT_EQ(parse_bytes("4096"), 4096u);
    EXPECT_EQ(parse_bytes("17B"), 17u);
    EXPECT_EQ(parse_bytes("512MiB"), 512ull << 20);
    EXPECT_EQ(parse_bytes("2GiB"), 2ull << 30);
    EXPECT_EQ(parse_bytes("2 gib"), 2ull << 30);
    EXPECT_EQ(parse_bytes("64k"), 64ull << 10);
    EXPECT_EQ(parse_bytes("1.5GiB"), 3ull << 29);
    EXPECT_EQ(parse_bytes("3GB"), 3'000'000'000ull);
    EXPECT_EQ(parse_bytes("1TiB"), 1ull << 40);
}

TEST(ParseBytes, SizesBetweenTwoToThe63AndTwoToThe64AreExact) {
    EXPECT_EQ(parse_bytes("10000000TiB"), 10'000'000ull << 40);
    EXPECT_EQ(parse_bytes("18446744073709549568"), 18'446'744'073'709'549'568ull);  // 2^64 - 2048
    EXPECT_THROW_WITH(parse_bytes("18446744073709551616"), InvalidArgument, "too large");  // 2^64
}

TEST(ParseBytes, RejectsGarbageWithAMessageNamingWhatWasParsed) {
    EXPECT_THROW_WITH(parse_bytes("lots", "memory limit"), InvalidArgument, "memory limit: invalid size 'lots'");
    EXPECT_THROW_WITH(parse_bytes("12 parsecs"), InvalidArgument, "invalid size");
    EXPECT_THROW_WITH(parse_bytes("-5MiB"), InvalidArgument, "invalid size");
    EXPECT_THROW_WITH(parse_bytes(""), InvalidArgument, "invalid size");
    EXPECT_THROW_WITH(parse_bytes("1.2.3"), InvalidArgument, "invalid size");
    EXPECT_THROW_WITH(parse_bytes("1.5"), InvalidArgument, "invalid size '1.5': a number of bytes is whole");
    EXPECT_THROW_WITH(parse_bytes("0.5B"), InvalidArgument, "a number of bytes is whole");
    EXPECT_EQ(parse_bytes("1000000000.0"), 1'000'000'000u);
    EXPECT_THROW_WITH(parse_bytes("75%"), InvalidArgument, "invalid size");
    EXPECT_THROW_WITH(parse_bytes("99999999999TiB"), InvalidArgument, "too large");
}

TEST(ParseSize, AcceptsPercentagesAndResolvesThemAgainstATotal) {
    auto const size = parse_size("75%");
    EXPECT_TRUE(size.is_percent());
    EXPECT_EQ(size.resolve(1000), 750u);
    EXPECT_EQ(size.to_string(), "75%");
    auto const bytes = parse_size("1KiB");
    EXPECT_FALSE(bytes.is_percent());
    EXPECT_EQ(bytes.resolve(1), 1024u);
    EXPECT_EQ(bytes.to_string(), "1.00 KiB");
}

TEST(ParseSize, RejectsPercentagesOutsideZeroToHundred) {
    EXPECT_THROW_WITH(parse_size("150%"), InvalidArgument, "from 0 to 100");
    EXPECT_THROW_WITH(parse_size("%"), InvalidArgument, "invalid percentage");
    EXPECT_THROW_WITH(parse_size("5MiB%"), InvalidArgument, "invalid percentage");
    EXPECT_THROW_WITH(SizeSpec::percent(-1), InvalidArgument, "between 0% and 100%");
}

TEST(ParseDuration, AcceptsUnitsAndZeroOrOffAsDisabled) {
    EXPECT_EQ(parse_duration("50ms"), 50ms);
    EXPECT_EQ(parse_duration("2s"), 2s);
    EXPECT_EQ(parse_duration("1.5s"), 1500ms);
    EXPECT_EQ(parse_duration("100us"), 100us);
    EXPECT_EQ(parse_duration("2min"), 120s);
    EXPECT_EQ(parse_duration("0"), 0ns);
    EXPECT_EQ(parse_duration("OFF"), 0ns);
    EXPECT_THROW_WITH(parse_duration("5", "interval"), InvalidArgument, "interval: invalid duration '5'");
    EXPECT_THROW_WITH(parse_duration("soon"), InvalidArgument, "invalid duration");
}

TEST(ParseBool, AcceptsTheUsualSpellings) {
    for (auto text : {"1", "true", "YES", "on"}) {
        EXPECT_TRUE(parse_bool(text)) << text;
    }
    for (auto text : {"0", "False", "no", "off"}) {
        EXPECT_FALSE(parse_bool(text)) << text;
    }
    EXPECT_THROW_WITH(parse_bool("maybe", "verify"), InvalidArgument, "verify: invalid flag 'maybe'");
}

TEST(FormatBytes, PicksTheLargestUnitBelowTheValue) {
    EXPECT_EQ(format_bytes(0), "0 B");
    EXPECT_EQ(format_bytes(1023), "1023 B");
    EXPECT_EQ(format_bytes(1536), "1.50 KiB");
    EXPECT_EQ(format_bytes(2ull << 30), "2.00 GiB");
}

TEST(FormatDuration, SaysSecondsToATenthAndNeverRoundsASmallDurationToZero) {
    using namespace std::chrono_literals;
    EXPECT_EQ(format_duration(500ns), "500 ns");
    EXPECT_EQ(format_duration(10ms), "10 ms");
    EXPECT_EQ(format_duration(999'600us), "1.0 s");
    EXPECT_EQ(format_duration(3'140ms), "3.1 s");
}

TEST(Options, CodeBeatsCommandLineBeatsEnvironment) {
    auto options = Options::from_environment({"SPILLWAY_WINDOW=3", "PATH=/bin", "SPILLWAY_THREADS=7"});
    EXPECT_EQ(options.get_int("window", 0, 0, 100), 3);
    options.set("window", "2", OptionSource::command_line);
    EXPECT_EQ(options.get_int("window", 0, 0, 100), 2);
    options.set("window", "1");
    EXPECT_EQ(options.get_int("window", 0, 0, 100), 1);
    EXPECT_EQ(options.find("window")->source, OptionSource::code);
    EXPECT_EQ(options.get_int("threads", 0, 0, 100), 7);
    EXPECT_EQ(options.get_int("path", 42, 0, 100), 42);
}

TEST(Options, ReadsSpillwayVariablesFromTheProcessEnvironment) {
    ::setenv("SPILLWAY_TEST_ONLY_OPTION", "9MiB", 1);
    auto const options = Options::from_environment();
    ::unsetenv("SPILLWAY_TEST_ONLY_OPTION");
    EXPECT_EQ(options.get_bytes("test_only_option", 0), 9ull << 20);
}

TEST(Options, ReturnsTheFallbackWhenUnset) {
    Options const options;
    EXPECT_EQ(options.get_string("codec", "none"), "none");
    EXPECT_TRUE(options.get_bool("verify", true));
    EXPECT_EQ(options.get_bytes("max_spill_bytes", 5), 5u);
    EXPECT_EQ(options.get_size("memory_limit_host", SizeSpec::percent(80)), SizeSpec::percent(80));
    EXPECT_EQ(options.get_duration("spill_interval", 7ms), 7ms);
    EXPECT_FALSE(options.find("codec").has_value());
}

TEST(Options, ErrorsNameTheOptionAndWhereItsValueCameFrom) {
    auto options = Options::from_environment({"SPILLWAY_MEMORY_LIMIT_HOST=lots"});
    EXPECT_THROW_WITH(
        options.get_size("memory_limit_host", SizeSpec::bytes(0)),
        InvalidArgument,
        "option 'memory_limit_host' (from environment variable SPILLWAY_MEMORY_LIMIT_HOST): invalid size 'lots'"
    );
    options.set("threads", "many", OptionSource::command_line);
    EXPECT_THROW_WITH(
        options.get_int("threads", 1, 1, 64), InvalidArgument,
        "option 'threads' (from the command line): invalid value 'many': expected an integer from 1 to 64"
    );
    options.set("threads", "65");
    EXPECT_THROW_WITH(options.get_int("threads", 1, 1, 64), InvalidArgument, "from 1 to 64");
    options.set("codec", "gzip");
    EXPECT_THROW_WITH(
        options.get_choice("codec", {"none", "lz4", "zstd"}, "none"), InvalidArgument,
        "option 'codec': invalid value 'gzip': expected one of none, lz4, zstd"
    );
}

TEST(Options, ReadsRealNumbersWithinTheirRange) {
    Options options;
    EXPECT_EQ(options.get_double("scale", 1.5, 0, 10), 1.5);
    options.set("scale", " 0.25 ");
    EXPECT_EQ(options.get_double("scale", 1.5, 0, 10), 0.25);
    options.set("scale", "11");
    EXPECT_THROW_WITH(options.get_double("scale", 1, 0, 10), InvalidArgument,
                      "option 'scale': invalid value '11': expected a number from 0 to 10");
    options.set("scale", "1x");
    EXPECT_THROW_WITH(options.get_double("scale", 1, 0, 10), InvalidArgument, "invalid value '1x'");
    options.set("scale", "inf");
    EXPECT_THROW_WITH(options.get_double("scale", 1, 0, 10), InvalidArgument, "invalid value 'inf'");
}

TEST(Options, ChoicesAreCaseInsensitive) {
    Options options;
    options.set("codec", "ZSTD");
    EXPECT_EQ(options.get_choice("codec", {"none", "lz4", "zstd"}, "none"), "zstd");
}

TEST(Options, RejectsMalformedNamesAndIgnoresThemInTheEnvironment) {
    Options options;
    EXPECT_THROW_WITH(options.set("Memory-Limit", "1"), InvalidArgument, "invalid option name 'Memory-Limit'");
    auto const from_environment = Options::from_environment({"SPILLWAY_BAD-NAME=1", "SPILLWAY_=2"});
    EXPECT_FALSE(from_environment.find("bad-name").has_value());
}

TEST(Options, NamesTheEnvironmentVariableOfAnOption) {
    EXPECT_EQ(Options::environment_variable("spill_dir"), "SPILLWAY_SPILL_DIR");
}

TEST(Options, NamesTheOptionsSetThatNoLookupRead) {
    auto options = Options::from_environment({"SPILLWAY_SPILL_CODEC=lz4", "SPILLWAY_UNKNOWN=1"});
    options.set("spill_codec", "zstd").set("spil_codec", "zstd").set("threads", "2", OptionSource::command_line);
    EXPECT_EQ(options.unread(OptionSource::code), (std::vector<std::string>{"spil_codec", "spill_codec"}));
    EXPECT_EQ(options.get_string("spill_codec", "none"), "zstd");
    EXPECT_EQ(options.unread(OptionSource::code), std::vector<std::string>{"spil_codec"});
    EXPECT_EQ(options.unread(OptionSource::environment), std::vector<std::string>{"unknown"});
    EXPECT_EQ(options.unread(OptionSource::command_line), std::vector<std::string>{"threads"});
    EXPECT_THROW_WITH(options.expect_read(OptionSource::code, "spillway.shuffle"), InvalidArgument,
                      "spillway.shuffle takes no option named 'spil_codec'; docs/configuration.md lists");
    // A copy keeps what was read; a value set again is unread until read again.
    auto copy = options;
    EXPECT_EQ(copy.unread(OptionSource::code), std::vector<std::string>{"spil_codec"});
    copy.set("spill_codec", "lz4");
    EXPECT_EQ(copy.unread(OptionSource::code), (std::vector<std::string>{"spil_codec", "spill_codec"}));
    EXPECT_EQ(options.unread(OptionSource::code), std::vector<std::string>{"spil_codec"});
    static_cast<void>(options.find("spil_codec"));
    EXPECT_NO_THROW(options.expect_read(OptionSource::code, "spillway.shuffle"));
}
