#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <common/scoped_environment.hpp>

#include "command_line.hpp"

using namespace spillway;
using namespace spillway::cli;
using testing::HasSubstr;

namespace {

struct Parsed {
    std::optional<ExitCode> code;
    std::string out;
    std::string err;
};

Parsed parse(CommandLine& command_line, std::vector<char const*> arguments) {
    arguments.insert(arguments.begin(), "spillway");
    std::ostringstream out;
    std::ostringstream err;
    auto const code = command_line.parse(static_cast<int>(arguments.size()), arguments.data(), out, err);
    return {code, out.str(), err.str()};
}

}  // namespace

TEST(CommandLine, OptionFlagsBecomeCommandLineOptions) {
    CommandLine command_line;
    auto const parsed = parse(command_line, {"partition", "-i", "a.csv,b.csv", "-k", "id", "-o", "out",
                                             "--memory-limit", "1GiB", "--threads", "2", "--delimiter", ";",
                                             "--json", "--trace", "t.json"});
    ASSERT_FALSE(parsed.code.has_value()) << parsed.err;
    auto const options = command_line.options();
    EXPECT_EQ(options.find("memory_limit_host")->text, "1GiB");
    EXPECT_EQ(options.find("memory_limit_host")->source, OptionSource::command_line);
    EXPECT_EQ(options.get_int("threads", 0, 0, 8), 2);
    EXPECT_EQ(options.find("csv_delimiter")->text, ";");
    EXPECT_FALSE(options.find("window").has_value()) << "only flags given become options";
    EXPECT_TRUE(command_line.output().json);
    EXPECT_FALSE(command_line.output().quiet);
    EXPECT_EQ(command_line.output().trace, "t.json");
}

TEST(CommandLine, MessagesNameTheFlagsOfOptionsAsWholeWords) {
    CommandLine command_line;
    EXPECT_EQ(command_line.name_flags("raise csv_chunk_bytes for longer rows; memory_limit_host, not "
                                      "xcsv_chunk_bytes or csv_chunk_bytes_2 or --csv_chunk_bytes"),
              "raise --block-size for longer rows; --memory-limit, not xcsv_chunk_bytes or csv_chunk_bytes_2 or "
              "--csv_chunk_bytes");
    EXPECT_EQ(command_line.name_flags("option csv_bad_rows must be 'fail' or 'skip'"),
              "option --bad-rows must be 'fail' or 'skip'");
    EXPECT_EQ(command_line.name_flags("16 files on 2 threads with a window of 4"),
              "16 files on 2 threads with a window of 4") << "plain words stay words";
}

TEST(CommandLine, MessagesNameTheEnvironmentVariableOfAnOptionSetThereAndNotByItsFlag) {
    spillway::test::ScopedEnvironment const variable("SPILLWAY_SPILL_DIRECTORY", "a-file/spill");
    CommandLine command_line;
    auto const parsed = parse(command_line, {"shuffle", "--memory-limit", "64MiB"});
    ASSERT_FALSE(parsed.code.has_value()) << "a job to run: " << parsed.err;
    EXPECT_EQ(command_line.name_flags("cannot create spill_directory 'a-file/spill'; raise memory_limit_host"),
              "cannot create SPILLWAY_SPILL_DIRECTORY 'a-file/spill'; raise --memory-limit");
    auto const given = parse(command_line, {"shuffle", "--spill-dir", "b"});
    ASSERT_FALSE(given.code.has_value()) << given.err;
    EXPECT_EQ(command_line.name_flags("cannot create spill_directory 'b'"), "cannot create --spill-dir 'b'")
        << "the flag wins";
}

TEST(CommandLine, ABadValueIsAUsageErrorNamingTheFlag) {
    CommandLine command_line;
    auto const parsed = parse(command_line, {"partition", "-i", "a.csv", "-k", "id", "-o", "out", "--threads", "-3"});
    EXPECT_EQ(parsed.code, ExitCode::usage);
    EXPECT_THAT(parsed.err, HasSubstr("--threads: invalid value '-3': expected an integer from 0 to 4096"));
    // The flag, not a name the check gave the value.
    auto const size =
        parse(command_line, {"partition", "-i", "a.csv", "-k", "id", "-o", "out", "--memory-limit", "1XB"});
    EXPECT_THAT(size.err, HasSubstr("--memory-limit: invalid size '1XB'"));
    auto const timeout = parse(command_line, {"shuffle", "--collective-timeout", "0"});
    EXPECT_THAT(timeout.err, HasSubstr("--collective-timeout: invalid duration '0': expected a number above zero"));
    EXPECT_THAT(timeout.err, testing::Not(HasSubstr("0/off"))) << "0 and off are no timeouts here";
    auto const scale = parse(command_line, {"generate", "-o", "out.csv", "--scale", "-1"});
    EXPECT_THAT(scale.err, HasSubstr("--scale: invalid value '-1': expected a number above 0 and at most 2666"));
}

TEST(CommandLine, HelpEndsTheProgramSuccessfully) {
    CommandLine command_line;
    auto const parsed = parse(command_line, {"--help"});
    EXPECT_EQ(parsed.code, ExitCode::success);
    EXPECT_THAT(parsed.out, HasSubstr("Exit codes:"));
}

TEST(CommandLine, AMissingRequiredFlagIsAUsageError) {
    CommandLine command_line;
    auto const parsed = parse(command_line, {"partition", "-k", "id", "-o", "out"});
    EXPECT_EQ(parsed.code, ExitCode::usage);
    EXPECT_THAT(parsed.err, HasSubstr("--input"));
}

TEST(CommandLine, NamesTheCommandGivenEvenWhenItsFlagsAreWrong) {
    CommandLine given;
    ASSERT_FALSE(parse(given, {"generate", "-o", "out.csv"}).code.has_value());
    EXPECT_EQ(given.command(), "generate");
    CommandLine wrong;
    EXPECT_EQ(parse(wrong, {"partition", "-i", "a.csv", "-k", "id", "-o", "out", "--threads", "-3"}).code,
              ExitCode::usage);
    EXPECT_EQ(wrong.command(), "partition");
    CommandLine none;
    EXPECT_EQ(parse(none, {"--json"}).code, ExitCode::usage);
    EXPECT_EQ(none.command(), "");
}

TEST(CommandLine, ParsingAgainForgetsWhatAnEarlierParseSet) {
    CommandLine command_line;
    ASSERT_FALSE(parse(command_line, {"partition", "-i", "a.csv", "-k", "id", "-o", "out", "--threads", "2",
                                      "--json", "--trace", "t.json"})
                     .code.has_value());
    ASSERT_EQ(parse(command_line, {"generate", "-o", "out.csv", "--window", "3", "--quiet", "--threads", "-3"}).code,
              ExitCode::usage);

    auto const parsed = parse(command_line, {"shuffle", "--scale", "0.5"});
    ASSERT_FALSE(parsed.code.has_value()) << parsed.err;
    EXPECT_EQ(command_line.command(), "shuffle");
    auto const options = command_line.options();
    EXPECT_EQ(options.find("scale")->text, "0.5");
    for (auto const* earlier : {"threads", "window"}) {
        EXPECT_FALSE(options.find(earlier).has_value()) << earlier << " was set by an earlier parse";
    }
    EXPECT_FALSE(command_line.output().json);
    EXPECT_FALSE(command_line.output().quiet);
    EXPECT_TRUE(command_line.output().trace.empty());
}

TEST(CommandLine, AFailedParseKeepsNoValueOfAnEarlierOne) {
    CommandLine command_line;
    ASSERT_FALSE(parse(command_line, {"shuffle", "--window", "5"}).code.has_value());
    // --threads is checked, and fails, before --window's value is stored.
    ASSERT_EQ(parse(command_line, {"shuffle", "--window", "3", "--threads", "-3"}).code, ExitCode::usage);
    auto const window = command_line.options().find("window");
    EXPECT_FALSE(window.has_value() && window->text == "5") << "--window 5 came from the earlier parse";
}
