// The `spillway` tool end to end: real processes, real files.

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <common/temporary_directory.hpp>

#include "cli_process.hpp"

using spillway::test::run_spillway;
using testing::HasSubstr;
using testing::Not;

namespace {

/// A small generated lineitem CSV in a directory of its own.
class CliPartition : public testing::Test {
  protected:
    void SetUp() override {
        input_ = directory_.path() / "lineitem.csv";
        auto const generated = run_spillway({"generate", "--scale", "0.01", "--output", input_.string(), "--quiet"});
        ASSERT_EQ(generated.exit_code, 0) << generated.err;
    }

    spillway::test::TemporaryDirectory directory_;
    std::filesystem::path input_;
};

std::size_t count_files(std::filesystem::path const& directory) {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(directory), {}));
}

/// The JSON object that a failed `--json` run printed as all of its stdout.
nlohmann::json failure_object(spillway::test::ProcessResult const& result, int exit_code) {
    EXPECT_EQ(result.exit_code, exit_code) << result.err;
    EXPECT_EQ(std::count(result.out.begin(), result.out.end(), '\n'), 1) << "one line: " << result.out;
    auto const json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json.at("verified"), false);
    EXPECT_EQ(json.at("exit_code"), exit_code);
    return json;
}

/// Waits until `child`, started with its stderr stalled, blocks on its first
/// line of progress: its run is under way and cannot finish. False if it
/// ended first. The deadline only keeps a broken build from hanging the test.
bool wait_until_stalled(spillway::test::ChildProcess& child) {
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (std::chrono::steady_clock::now() < deadline) {
        if (child.blocked_writing_to_a_pipe()) {
            return true;
        }
        if (!child.running()) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
}

}  // namespace

TEST_F(CliPartition, RepartitionsAGeneratedCsvAndVerifiesIt) {
    auto const output = directory_.path() / "parts";
    auto const result = run_spillway({"partition", "--input", input_.string(), "--key", "l_orderkey,l_linenumber",
                                      "--partitions", "8", "--output", output.string(), "--json",
                                      "--memory-limit", "256MiB"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    auto const summary = result.summary();
    EXPECT_EQ(summary.at("verified"), true);
    EXPECT_EQ(summary.at("command"), "partition");
    EXPECT_GT(summary.at("rows").get<std::uint64_t>(), 50'000u);
    EXPECT_EQ(summary.at("bytes"), std::filesystem::file_size(input_));
    EXPECT_EQ(summary.at("settings").at("memory_limit_bytes"), std::uint64_t{256} << 20) << "sizes are bytes";
    EXPECT_EQ(count_files(output), 8u);
    EXPECT_TRUE(std::filesystem::exists(output / "part-00007.csv"));
}

TEST_F(CliPartition, RepartitionsTpchTblFilesByColumnNumber) {
    auto const tbl = directory_.path() / "lineitem.tbl";
    auto const generated = run_spillway({"generate", "--scale", "0.005", "--output", tbl.string(), "--quiet"});
    ASSERT_EQ(generated.exit_code, 0) << generated.err;
    std::ifstream file(tbl);
    std::string first_line;
    std::getline(file, first_line);
    EXPECT_EQ(first_line.back(), '|') << "a .tbl row ends with its delimiter";

    auto const output = directory_.path() / "parts";
    auto const result = run_spillway({"partition", "-i", tbl.string(), "-k", "0", "--partitions", "3", "-o",
                                      output.string(), "--json", "--threads", "1", "--block-size", "64KiB"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.summary().at("verified"), true);
    EXPECT_TRUE(std::filesystem::exists(output / "part-00002.tbl"));
}

TEST_F(CliPartition, CsvFilesNamedAsAnotherFormatOrACompressedStreamGiveCsvNamedPartitions) {
    for (std::string const name : {"text.parquet", "plain.csv.gz"}) {
        auto const input = directory_.path() / name;
        std::ofstream(input) << "a,b\n1,x\n2,y\n3,z\n";
        auto const output = directory_.path() / ("parts-" + name);
        auto const result = run_spillway({"partition", "-i", input.string(), "--input-format", "csv", "-k", "a",
                                          "--partitions", "2", "-o", output.string(), "--quiet"});
        ASSERT_EQ(result.exit_code, 0) << result.err;
        EXPECT_TRUE(std::filesystem::exists(output / "part-00000.csv")) << name;
        EXPECT_TRUE(std::filesystem::exists(output / "part-00001.csv")) << name;
        // Read back by their names, as CSV.
        auto const again = run_spillway({"partition", "-i", (output / "part-*.csv").string(), "-k", "a",
                                         "--partitions", "2", "-o", (directory_.path() / ("again-" + name)).string(),
                                         "--quiet"});
        EXPECT_EQ(again.exit_code, 0) << again.err;
    }
}

TEST_F(CliPartition, CsvTextThatIsNotUtf8FailsIntoParquetAndLeavesNothingButGoesIntoCsv) {
    auto const input = directory_.path() / "latin1.csv";
    std::ofstream(input) << "id,name\n1,caf\xe9\n2,tea\n";
    auto const parquet = directory_.path() / "parquet";
    auto const failed = run_spillway({"partition", "-i", input.string(), "-k", "id", "--partitions", "2",
                                      "--output-format", "parquet", "-o", parquet.string(), "--quiet"});
    EXPECT_EQ(failed.exit_code, 1) << failed.err;
    EXPECT_THAT(failed.err, HasSubstr("column 'name' holds a string that is not UTF-8"));
    EXPECT_FALSE(std::filesystem::exists(parquet));
    auto const csv = run_spillway({"partition", "-i", input.string(), "-k", "id", "--partitions", "2", "-o",
                                   (directory_.path() / "csv").string(), "--quiet"});
    EXPECT_EQ(csv.exit_code, 0) << csv.err;
}

TEST_F(CliPartition, PrintsProgressAndATextSummary) {
    auto const result = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o",
                                      (directory_.path() / "parts").string(), "--partitions", "4", "--block-size",
                                      "1MiB"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_THAT(result.out, HasSubstr("spillway partition: verified"));
    EXPECT_THAT(result.out, HasSubstr("block_size 1.00 MiB")) << "sizes are formatted for people";
    EXPECT_THAT(result.out, HasSubstr("rows and checksum equal the input's"));
    EXPECT_THAT(result.err, HasSubstr("partition: 100%")) << "plain progress lines when stderr is not a terminal";
    EXPECT_THAT(result.err, HasSubstr("verify: 100%"));
}

TEST_F(CliPartition, QuietPrintsNothingButJsonStillPrintsTheSummary) {
    auto const quiet = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o",
                                     (directory_.path() / "a").string(), "--quiet"});
    ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
    EXPECT_EQ(quiet.out, "");
    EXPECT_EQ(quiet.err, "");
}

TEST_F(CliPartition, WritesATraceOfTheWorkItems) {
    auto const trace = directory_.path() / "trace.json";
    auto const result = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o",
                                      (directory_.path() / "parts").string(), "--quiet", "--trace",
                                      trace.string(), "--block-size", "1MiB"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    std::ifstream file(trace);
    auto const events = nlohmann::json::parse(file).at("traceEvents");
    std::size_t split_blocks = 0;
    std::size_t check_blocks = 0;
    for (auto const& event : events) {
        if (event.at("ph") == "X" && event.at("cat") == "seq_join") {
            (event.at("name") == "split block" ? split_blocks : check_blocks) += 1;
        }
    }
    EXPECT_GE(split_blocks, 7u) << "one event per block of the 7 MiB input";
    EXPECT_GE(check_blocks, 7u);
}

TEST_F(CliPartition, BlocksOfSmallFilesAreNoLargerThanTheLargestFile) {
    auto const result = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o",
                                      (directory_.path() / "parts").string(), "--partitions", "4", "--json"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.summary().at("settings").at("block_size_bytes"), std::filesystem::file_size(input_) + 1)
        << "16 MiB by default, but a block need not outgrow the file it is read from";
}

TEST_F(CliPartition, ABadSizeIsAUsageErrorNamingTheFlag) {
    auto const result = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o",
                                      (directory_.path() / "parts").string(), "--memory-limit", "lots"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_THAT(result.err, HasSubstr("--memory-limit"));
    EXPECT_THAT(result.err, HasSubstr("invalid size 'lots'"));
}

TEST_F(CliPartition, ALimitTooSmallFailsAtOnceNamingTheLeastThatWorks) {
    auto const output = directory_.path() / "parts";
    auto const result = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o", output.string(),
                                      "--memory-limit", "32MiB", "--threads", "2", "--block-size", "4MiB"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_THAT(result.err, HasSubstr("memory limit 32.00 MiB is too small"));
    EXPECT_THAT(result.err, HasSubstr("it needs at least 56.00 MiB")) << "one block in flight";
    EXPECT_FALSE(std::filesystem::exists(output)) << "nothing was started";

    auto const at_least = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o", output.string(),
                                        "--memory-limit", "56MiB", "--threads", "2", "--block-size", "4MiB", "--json"});
    EXPECT_EQ(at_least.exit_code, 0) << at_least.err;
    EXPECT_EQ(at_least.summary().at("settings").at("window"), 1) << "fewer blocks than threads where no more fit";
}

TEST_F(CliPartition, ATraceThatCannotBeWrittenFailsTheRunAndLeavesNoOutput) {
    // /dev/full opens, and refuses every write with ENOSPC.
    auto const output = directory_.path() / "parts";
    auto const result = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o", output.string(),
                                      "--partitions", "4", "--trace", "/dev/full"});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_THAT(result.err, HasSubstr("cannot write trace file '/dev/full': No space left on device"));
    EXPECT_FALSE(std::filesystem::exists(output)) << "the verified files were not moved into place";
}

TEST_F(CliPartition, AMissingInputIsAUsageErrorThatLeavesNoTraceFile) {
    auto const missing = directory_.path() / "missing.csv";
    auto const trace = directory_.path() / "trace.json";
    auto const result = run_spillway({"partition", "-i", input_.string() + "," + missing.string(), "-k",
                                      "l_orderkey", "-o", (directory_.path() / "parts").string(), "--trace",
                                      trace.string()});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_THAT(result.err, HasSubstr("input file '" + missing.string() + "' does not exist"));
    EXPECT_FALSE(std::filesystem::exists(trace)) << "a failed run writes no trace";

    auto const existing = directory_.path() / "existing.json";
    std::ofstream(existing) << "{}";
    auto const again = run_spillway({"partition", "-i", missing.string(), "-k", "l_orderkey", "-o",
                                     (directory_.path() / "parts").string(), "--trace", existing.string()});
    EXPECT_EQ(again.exit_code, 2);
    EXPECT_TRUE(std::filesystem::exists(existing)) << "a path that existed, such as /dev/null, is never removed";
}

TEST_F(CliPartition, AKeyThatIsNotAColumnIsAUsageErrorListingTheColumns) {
    auto const result = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey,orderkey", "-o",
                                      (directory_.path() / "parts").string()});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_THAT(result.err, HasSubstr("orderkey"));
    EXPECT_THAT(result.err, HasSubstr("l_shipmode:string"));
}

TEST_F(CliPartition, AStrayCommaInTheKeysOrInputsIsAUsageErrorNotADroppedName) {
    auto const parts = (directory_.path() / "parts").string();
    for (auto const* keys : {"l_orderkey,", "l_orderkey,,l_partkey", ","}) {
        auto const result = run_spillway({"partition", "-i", input_.string(), "-k", keys, "--partitions", "4", "-o",
                                          parts});
        EXPECT_EQ(result.exit_code, 2) << keys;
        EXPECT_THAT(result.err, HasSubstr("--key: '" + std::string(keys) + "' has an empty item")) << result.err;
    }
    auto const result = run_spillway({"partition", "-i", input_.string() + ",", "-k", "l_orderkey", "-o", parts});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_THAT(result.err, HasSubstr("--input: '" + input_.string() + ",' has an empty item"));
    EXPECT_FALSE(std::filesystem::exists(parts));
    // Lists and repeated flags still name several.
    auto const listed = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey,l_partkey", "-k",
                                      "l_suppkey", "--partitions", "4", "-o", parts, "--json", "--quiet"});
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_EQ(listed.summary().at("settings").at("keys"),
              nlohmann::json::array({"l_orderkey", "l_partkey", "l_suppkey"}));
}

TEST_F(CliPartition, AnOutputDirectoryThatCannotBeMadeOrIsNotEmptyIsAUsageError) {
    auto const file = directory_.path() / "file";
    std::ofstream(file) << "x";
    // A path under a regular file fails with ENOTDIR, even for root.
    auto const unwritable = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o",
                                          (file / "parts").string()});
    EXPECT_EQ(unwritable.exit_code, 2);
    EXPECT_THAT(unwritable.err, HasSubstr("cannot create the output directory"));

    auto const not_empty = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o",
                                         directory_.path().string()});
    EXPECT_EQ(not_empty.exit_code, 2);
    EXPECT_THAT(not_empty.err, HasSubstr("is not empty"));
}

TEST_F(CliPartition, AnUnwritableTraceFileIsAUsageErrorFoundBeforeAnyOutputIsMade) {
    auto const file = directory_.path() / "file";
    std::ofstream(file) << "x";
    auto const output = directory_.path() / "parts";
    for (auto const& trace : {file / "trace.json", directory_.path() / "missing" / "trace.json"}) {
        auto const result = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o",
                                          output.string(), "--trace", trace.string()});
        EXPECT_EQ(result.exit_code, 2) << trace;
        EXPECT_THAT(result.err, HasSubstr("cannot create the trace file"));
        EXPECT_FALSE(std::filesystem::exists(output)) << "the output directory was made before the usage error";
    }
}

TEST_F(CliPartition, AMalformedRowFoundWhileRunningIsAFailureNamingFileAndLine) {
    {
        std::ofstream file(input_, std::ios::app);
        file << "not-a-key,2,3\n";
    }
    auto const output = directory_.path() / "parts";
    auto const result = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o",
                                      output.string(), "--quiet"});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_THAT(result.err, HasSubstr(input_.string() + ":"));
    EXPECT_FALSE(std::filesystem::exists(output)) << "the failed run removes the directory it made";
}

TEST_F(CliPartition, AFailedRunLeavesAnEmptyOutputDirectoryEmpty) {
    {
        std::ofstream file(input_, std::ios::app);
        file << "not-a-key,2,3\n";
    }
    auto const output = directory_.path() / "parts";
    std::filesystem::create_directory(output);
    auto const result = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o",
                                      output.string(), "--quiet"});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_TRUE(std::filesystem::is_directory(output));
    EXPECT_EQ(count_files(output), 0u) << "no partition file and no staging directory is left";
}

TEST_F(CliPartition, SigtermOrSigintRemovesThePartialOutputAndEndsWith128PlusTheSignal) {
    for (auto const& [signal, code] : {std::pair{SIGTERM, 143}, std::pair{SIGINT, 130}}) {
        auto const output = directory_.path() / ("parts-" + std::to_string(signal));
        auto const trace = directory_.path() / ("trace-" + std::to_string(signal) + ".json");
        spillway::test::ChildProcess child({SPILLWAY_CLI_PATH, "partition", "-i", input_.string(), "-k",
                                            "l_orderkey", "-o", output.string(), "--partitions", "8",
                                            "--block-size", "64KiB", "--trace", trace.string()},
                                           {}, true);
        ASSERT_TRUE(wait_until_stalled(child));
        auto const staging = output / (".spillway-partial-" + std::to_string(child.pid()));
        EXPECT_EQ(count_files(staging), 8u) << "the run writes its files there";
        child.signal(signal);
        auto const result = child.wait();
        EXPECT_EQ(result.signal, 0) << "the tool ends itself, after removing its files";
        EXPECT_EQ(result.exit_code, code);
        EXPECT_THAT(result.err, HasSubstr(signal == SIGINT ? "spillway: interrupted by SIGINT"
                                                           : "spillway: terminated by SIGTERM"));
        EXPECT_FALSE(std::filesystem::exists(output)) << "the run made it, so it removed it";
        EXPECT_FALSE(std::filesystem::exists(trace)) << "an interrupted run writes no trace";
    }
}

TEST_F(CliPartition, WithJsonAnInterruptedRunPrintsOneJsonObjectNamingTheSignal) {
    for (auto const& [signal, code] : {std::pair{SIGINT, 130}, std::pair{SIGTERM, 143}}) {
        auto const output = directory_.path() / ("parts-json-" + std::to_string(signal));
        spillway::test::ChildProcess child({SPILLWAY_CLI_PATH, "partition", "-i", input_.string(), "-k",
                                            "l_orderkey", "-o", output.string(), "--partitions", "8",
                                            "--block-size", "64KiB", "--json"},
                                           {}, true);
        ASSERT_TRUE(wait_until_stalled(child));
        child.signal(signal);
        auto const result = child.wait();
        EXPECT_EQ(result.signal, 0);
        auto const json = failure_object(result, code);
        EXPECT_EQ(json.at("command"), "partition");
        EXPECT_THAT(json.at("error").get<std::string>(),
                    HasSubstr(signal == SIGINT ? "interrupted by SIGINT" : "terminated by SIGTERM"));
        EXPECT_FALSE(std::filesystem::exists(output));
    }
}

TEST_F(CliPartition, WithJsonAUsageErrorIsOneJsonObjectNamingTheError) {
    auto const output = directory_.path() / "parts";
    auto const too_small = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o",
                                         output.string(), "--memory-limit", "64MiB", "--json"});
    auto const json = failure_object(too_small, 2);
    EXPECT_EQ(json.at("command"), "partition");
    EXPECT_THAT(json.at("error").get<std::string>(), HasSubstr("memory limit 64.00 MiB is too small"));
    EXPECT_THAT(too_small.err, HasSubstr("memory limit 64.00 MiB is too small")) << "stderr says it too";

    for (auto const& flags : {std::vector<std::string>{"--json", "--memory-limit", "lots"},
                              std::vector<std::string>{"--memory-limit", "lots", "--json"}}) {
        std::vector<std::string> arguments{"partition", "-i", input_.string(), "-k", "l_orderkey", "-o",
                                           output.string()};
        arguments.insert(arguments.end(), flags.begin(), flags.end());
        auto const bad_value = failure_object(run_spillway(arguments), 2);
        EXPECT_EQ(bad_value.at("command"), "partition");
        EXPECT_THAT(bad_value.at("error").get<std::string>(), HasSubstr("--memory-limit"));
    }
}

TEST_F(CliPartition, WithJsonAFailureWhileRunningIsOneJsonObjectNamingTheError) {
    {
        std::ofstream file(input_, std::ios::app);
        file << "not-a-key,2,3\n";
    }
    auto const result = run_spillway({"partition", "-i", input_.string(), "-k", "l_orderkey", "-o",
                                      (directory_.path() / "parts").string(), "--json", "--quiet"});
    auto const json = failure_object(result, 1);
    EXPECT_EQ(json.at("command"), "partition");
    EXPECT_THAT(json.at("error").get<std::string>(), HasSubstr(input_.string() + ":"));
}

TEST(Cli, HelpDocumentsTheCommandsAndExitCodes) {
    auto const result = run_spillway({"--help"});
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_THAT(result.out, HasSubstr("shuffle"));
    EXPECT_THAT(result.out, HasSubstr("partition"));
    EXPECT_THAT(result.out, HasSubstr("generate"));
    EXPECT_THAT(result.out, HasSubstr("3  the job ran but its output failed verification"));
    EXPECT_THAT(result.out, HasSubstr("130, 143  SIGINT (Ctrl-C) or SIGTERM ended the job"));
    auto const partition = run_spillway({"partition", "--help"});
    EXPECT_EQ(partition.exit_code, 0);
    for (auto const* flag : {"--input", "--key", "--output", "--partitions", "--memory-limit", "--threads",
                             "--window", "--json", "--trace", "--quiet", "SPILLWAY_MEMORY_LIMIT_HOST"}) {
        EXPECT_THAT(partition.out, HasSubstr(flag));
    }
    auto const shuffle = run_spillway({"shuffle", "--help"});
    EXPECT_EQ(shuffle.exit_code, 0);
    for (auto const* flag : {"--ranks", "--comm", "--memory-limit", "--spill-dir", "--codec", "--threads", "--window",
                             "--partitions", "--scale", "--json", "--trace", "--quiet"}) {
        EXPECT_THAT(shuffle.out, HasSubstr(flag));
    }
}

TEST(Cli, AnUnknownFlagOrNoCommandIsAUsageError) {
    auto const unknown = run_spillway({"generate", "-o", "unused.csv", "--frobnicate"});
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_THAT(unknown.err, HasSubstr("--frobnicate"));
    EXPECT_THAT(unknown.err, testing::StartsWith("spillway: ")) << "named as the tool's other errors are";
    EXPECT_THAT(unknown.err, testing::EndsWith("\nRun with --help for more information.\n"));
    auto const none = run_spillway({});
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_THAT(none.err, HasSubstr("a command is required: shuffle, partition, generate or tpch"));
    auto const flags_only = run_spillway({"--json"});
    EXPECT_EQ(flags_only.exit_code, 2);
    EXPECT_THAT(flags_only.out, HasSubstr("a command is required"));
    auto const misspelt = run_spillway({"partitoin", "-i", "rows.csv"});
    EXPECT_EQ(misspelt.exit_code, 2);
    EXPECT_THAT(misspelt.err,
                HasSubstr("unknown command 'partitoin': the commands are shuffle, partition, generate and tpch"));
}

TEST(Cli, VersionPrintsTheVersion) {
    auto const version = run_spillway({"--version"});
    EXPECT_EQ(version.exit_code, 0);
    EXPECT_THAT(version.out, testing::StartsWith("spillway " SPILLWAY_VERSION));
}

TEST(Cli, ALogLevelThatNamesNoLevelIsAUsageError) {
    // A query that fails logs as it ends: reading such a level once hung there.
    std::vector<std::string> const query{"tpch", "--query", "9", "--scale", "0.01", "--memory-limit", "1MiB",
                                         "--threads", "1", "--quiet"};
    for (auto const* level : {"SPILLWAY_LOG_LEVEL=verbose", "SPILLWAY_LOG_LEVEL="}) {
        auto const result = run_spillway(query, {level});
        EXPECT_EQ(result.exit_code, 2) << level << ": " << result.err;
        EXPECT_THAT(result.err, HasSubstr("names no log level: expected trace, debug, info, warn, error or off"))
            << level;
        EXPECT_THAT(result.err, Not(HasSubstr("ignoring"))) << "refused, not ignored: " << result.err;
    }
    spillway::test::TemporaryDirectory directory;
    auto const nation = run_spillway({"generate", "--table", "nation", "-o", (directory.path() / "n.csv").string(),
                                      "--quiet"},
                                     {"SPILLWAY_LOG_LEVEL=ERROR"});
    EXPECT_EQ(nation.exit_code, 0) << "levels are read in any case: " << nation.err;
}

TEST(Cli, ABadValueFromTheEnvironmentIsAUsageErrorNamingItsVariable) {
    spillway::test::TemporaryDirectory directory;
    auto const input = directory.path() / "in.csv";
    std::ofstream(input) << "a,b\n1,2\n";
    std::vector<std::string> const partition{"partition", "-i", input.string(), "-k", "a", "-o",
                                             (directory.path() / "out").string(), "--quiet"};
    for (auto const* variable : {"SPILLWAY_CSV_BAD_ROWS=nope", "SPILLWAY_CSV_DELIMITER=ab", "SPILLWAY_CSV_QUOTE=xx",
                                 "SPILLWAY_CSV_CHUNK_BYTES=1", "SPILLWAY_THREADS=x"}) {
        auto const result = run_spillway(partition, {variable});
        EXPECT_EQ(result.exit_code, 2) << variable << ": " << result.err;
        auto const name = std::string(variable).substr(0, std::string(variable).find('='));
        EXPECT_THAT(result.err, HasSubstr(name)) << result.err;
        EXPECT_THAT(result.err, HasSubstr("invalid value")) << result.err;
        EXPECT_THAT(result.err, Not(HasSubstr("option 'SPILLWAY_"))) << "the variable named once: " << result.err;
    }
    auto const shuffle = run_spillway({"shuffle", "--scale", "0.001", "--quiet"}, {"SPILLWAY_COLLECTIVE_TIMEOUT=0"});
    EXPECT_EQ(shuffle.exit_code, 2) << shuffle.err;
    EXPECT_THAT(shuffle.err, HasSubstr("spillway: SPILLWAY_COLLECTIVE_TIMEOUT: invalid value '0'"));
    EXPECT_FALSE(std::filesystem::exists(directory.path() / "out"));
}

TEST(Cli, OptionsOutOfTheirRangeInTheEnvironmentAreUsageErrors) {
    for (auto const* variable : {"SPILLWAY_SEQ_JOIN_STALL_TIMEOUT=bogus", "SPILLWAY_MEMORY_RESERVE_TIMEOUT=0",
                                 "SPILLWAY_MEMORY_RESERVE_TIMEOUT=off"}) {
        auto const result = run_spillway({"shuffle", "--scale", "0.001", "--quiet"}, {variable});
        EXPECT_EQ(result.exit_code, 2) << variable << ": " << result.err;
        EXPECT_THAT(result.err, HasSubstr(std::string(variable).substr(0, std::string(variable).find('='))));
    }
}

TEST(Cli, ChoicesTakeAnyCaseFromFlagsAndVariablesAlike) {
    spillway::test::TemporaryDirectory directory;
    auto const input = directory.path() / "in.csv";
    std::ofstream(input) << "a,b\n1,2\n3,4\n";
    auto const by_flag = run_spillway({"shuffle", "--scale", "0.001", "--quiet", "--codec", "LZ4"});
    EXPECT_EQ(by_flag.exit_code, 0) << by_flag.err;
    auto const local = run_spillway({"partition", "-i", input.string(), "-k", "a", "--partitions", "2", "-o",
                                     (directory.path() / "out").string(), "--quiet"},
                                    {"SPILLWAY_COMM=LOCAL"});
    EXPECT_EQ(local.exit_code, 0) << local.err;
}

TEST(Cli, AnMpiLaunchOfSeveralProcessesWithoutCommMpiIsAUsageError) {
    spillway::test::TemporaryDirectory directory;
    auto const output = directory.path() / "orders.csv";
    std::vector<std::string> const generate{"generate", "--table", "orders", "--scale", "0.001", "-o",
                                            output.string(), "--quiet"};
    for (auto const* launched : {"OMPI_COMM_WORLD_SIZE=2", "PMI_SIZE=4"}) {
        auto const result = run_spillway(generate, {launched});
        EXPECT_EQ(result.exit_code, 2) << launched;
        EXPECT_THAT(result.err, HasSubstr("add --comm mpi")) << launched;
        EXPECT_FALSE(std::filesystem::exists(output));
    }
    auto const one = run_spillway(generate, {"OMPI_COMM_WORLD_SIZE=1"});
    EXPECT_EQ(one.exit_code, 0) << "mpirun -np 1 is one process: " << one.err;
}

TEST(Cli, WithJsonAnMpiLaunchWithoutCommMpiPrintsOneJsonObjectFromRankZero) {
    spillway::test::TemporaryDirectory directory;
    std::vector<std::string> const generate{"generate", "--scale", "0.001", "-o",
                                            (directory.path() / "lineitem.csv").string(), "--json"};
    auto const json = failure_object(run_spillway(generate, {"OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_RANK=0"}), 2);
    EXPECT_EQ(json.at("command"), "generate");
    EXPECT_THAT(json.at("error").get<std::string>(), HasSubstr("add --comm mpi"));
    auto const other = run_spillway(generate, {"OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_RANK=1"});
    EXPECT_EQ(other.exit_code, 2);
    EXPECT_EQ(other.out, "") << "the launcher merges the processes' stdout; rank 0 reports";
}

TEST(Cli, FlagsWinOverTheEnvironment) {
    spillway::test::TemporaryDirectory directory;
    auto const output = directory.path() / "orders.csv";
    auto const result = run_spillway({"generate", "--table", "orders", "--scale", "0.001", "-o", output.string(),
                                      "--json", "--threads", "1"},
                                     {"SPILLWAY_THREADS=3", "SPILLWAY_SCALE=0.002"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    auto const summary = result.summary();
    EXPECT_EQ(summary.at("settings").at("threads"), 1);
    EXPECT_EQ(summary.at("settings").at("scale"), 0.001);
    EXPECT_EQ(summary.at("rows"), 1500);
    EXPECT_TRUE(summary.at("verified").is_null()) << "generate has nothing to verify";
}

TEST(Cli, GenerateReadsNoVariableOfAFlagItLacks) {
    spillway::test::TemporaryDirectory directory;
    auto const output = directory.path() / "orders.csv";
    for (auto const* variable : {"SPILLWAY_COMM=bogus", "SPILLWAY_COMM=mpi"}) {
        auto const result = run_spillway({"generate", "--table", "orders", "--scale", "0.001", "-o", output.string(),
                                          "--json"},
                                         {variable});
        ASSERT_EQ(result.exit_code, 0) << variable << ": " << result.err;
        EXPECT_EQ(result.summary().at("rows"), 1500) << variable;
        std::filesystem::remove(output);
    }
    auto const tpch = run_spillway({"tpch", "--query", "1", "--scale", "0.001", "--quiet"}, {"SPILLWAY_COMM=bogus"});
    EXPECT_EQ(tpch.exit_code, 2) << "tpch has --comm, so it reads SPILLWAY_COMM: " << tpch.err;
    EXPECT_THAT(tpch.err, HasSubstr("SPILLWAY_COMM"));
}

namespace {

/// The flags of a `spillway shuffle` of about 120 MB (a ninth of the
/// default) through a memory limit of `limit` per process.
std::vector<std::string> small_shuffle(std::string const& limit, std::vector<std::string> more = {}) {
    std::vector<std::string> arguments{"shuffle", "--scale", "0.15", "--memory-limit", limit, "--json", "--quiet"};
    arguments.insert(arguments.end(), more.begin(), more.end());
    return arguments;
}

}  // namespace

TEST(CliShuffle, TheDefaultRunSpillsAndVerifies) {
    auto const result = run_spillway({"shuffle", "--json"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    auto const summary = result.summary();
    EXPECT_EQ(summary.at("verified"), true);
    EXPECT_EQ(summary.at("command"), "shuffle");
    EXPECT_EQ(summary.at("settings").at("ranks"), 4);
    EXPECT_EQ(summary.at("settings").at("comm"), "local");
    EXPECT_GT(summary.at("bytes").get<std::uint64_t>(), std::uint64_t{900} << 20) << "about 1 GiB";
    EXPECT_GT(summary.at("spilled_bytes").get<std::uint64_t>(), 0u) << "the default limit forces spilling";
    auto const bytes = summary.at("bytes").get<std::uint64_t>();
    auto const sent = summary.at("sent_bytes").get<std::uint64_t>();
    EXPECT_GT(sent, bytes / 2) << "each rank owns a quarter of the partitions, so sends about 3/4 of its rows";
    EXPECT_LT(sent, bytes);
    EXPECT_THAT(result.err, HasSubstr("generate: 100%"));
    EXPECT_THAT(result.err, HasSubstr("verify: 100%"));
}

TEST(CliShuffle, ASmallLimitSpillsMostOfTheDataAndStaysWithinIt) {
    spillway::test::TemporaryDirectory spill;
    auto const result = run_spillway({"shuffle", "--scale", "0.6", "--memory-limit", "160MiB", "--json", "--quiet",
                                      "--ranks", "3", "--threads", "2", "--spill-dir", spill.path().string(),
                                      "--codec", "lz4"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    auto const summary = result.summary();
    EXPECT_EQ(summary.at("verified"), true);
    EXPECT_EQ(summary.at("settings").at("ranks"), 3);
    EXPECT_EQ(summary.at("settings").at("codec"), "lz4");
    auto const bytes = summary.at("bytes").get<std::uint64_t>();
    EXPECT_GT(summary.at("spilled_bytes").get<std::uint64_t>(), bytes / 2);
    EXPECT_GT(summary.at("read_back_bytes").get<std::uint64_t>(), 0u);
    // Each rank stays within its limit but for what docs/architecture.md
    // ("Memory bound") allows: a chunk overbooked by a receive, one by a send,
    // and the chunks its verifying items hold. Chunks here are under 1 MiB
    // (5.3 MiB generated chunks in 12 partitions), so 4 MiB covers them all;
    // the rank's share of the data (160 MB) would not fit. The tables in
    // flight count too, and push the chunks to disk.
    auto const& host = summary.at("peak_memory").at("HOST");
    ASSERT_EQ(host.at("ranks").size(), 3u);
    for (auto const& peak : host.at("ranks")) {
        EXPECT_LE(peak.get<std::uint64_t>(), host.at("limit").get<std::uint64_t>() + (std::uint64_t{4} << 20));
    }
    EXPECT_TRUE(std::filesystem::is_empty(spill.path())) << "each process removes its spill directory";
}

TEST(CliShuffle, PrintsATextSummaryWithPhasesAndPeaks) {
    auto const result = run_spillway({"shuffle", "--scale", "0.05", "--ranks", "2", "--memory-limit", "128MiB"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_THAT(result.out, HasSubstr("spillway shuffle: verified"));
    EXPECT_THAT(result.out, HasSubstr("every row arrived in the partition its key hashes to"));
    EXPECT_THAT(result.out, HasSubstr("exchange"));
    EXPECT_THAT(result.out, HasSubstr("HOST"));
}

TEST(CliShuffle, ALimitTooSmallFailsAtOnceNamingTheLeastThatWorks) {
    // The default partitions, and so many that each chunk is cut into pieces
    // of a row or two, and every piece received keeps its bookkeeping.
    for (auto const& [scale, partitions] : {std::pair{"0.02", "16"}, std::pair{"0.1", "20000"}}) {
        std::vector<std::string> shuffle{"shuffle", "--scale", scale, "--partitions", partitions, "--threads", "2"};
        auto small = shuffle;
        small.insert(small.end(), {"--memory-limit", "1MiB"});
        auto const result = run_spillway(small);
        EXPECT_EQ(result.exit_code, 2);
        EXPECT_THAT(result.err, HasSubstr("is too small"));
        auto const at = result.err.find("at least ");
        ASSERT_NE(at, std::string::npos) << result.err;
        auto const least = result.err.substr(at + 9, result.err.find(' ', at + 9) - at - 9);
        shuffle.insert(shuffle.end(), {"--memory-limit", least + "MiB", "--json", "--quiet"});
        auto const enough = run_spillway(shuffle, {"SPILLWAY_MEMORY_RESERVE_TIMEOUT=10s"});
        EXPECT_EQ(enough.exit_code, 0) << partitions << " partitions: the limit named (" << least
                                       << " MiB) works: " << enough.err;
    }
}

TEST(CliShuffle, ALimitTooSmallNamesWhereItCameFrom) {
    auto const flag = run_spillway({"shuffle", "--scale", "0.02", "--memory-limit", "1MiB"});
    EXPECT_EQ(flag.exit_code, 2);
    EXPECT_THAT(flag.err, HasSubstr("give this process a --memory-limit of at least"));
    auto const variable = run_spillway({"shuffle", "--scale", "0.02"}, {"SPILLWAY_MEMORY_LIMIT_HOST=1MiB"});
    EXPECT_EQ(variable.exit_code, 2);
    EXPECT_THAT(variable.err, HasSubstr("give this process a SPILLWAY_MEMORY_LIMIT_HOST of at least"));
    EXPECT_THAT(variable.err, testing::Not(HasSubstr("memory_limit_host")));
}

TEST(CliShuffle, WithRoomEnoughEveryPartitionGetsItsWholeCoalescingBudget) {
    for (auto const& [partitions, budget] : {std::pair{"16", 16 * 16384}, std::pair{"1000", 1000 * 16384}}) {
        auto const result = run_spillway({"shuffle", "--scale", "0.05", "--partitions", partitions, "--memory-limit",
                                          "2GiB", "--json", "--quiet"});
        ASSERT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(result.summary().at("settings").at("coalesce_bytes"), budget) << partitions << " partitions";
    }
}

TEST(CliShuffle, PartitionsWhoseStateDoesNotFitTheLimitAreAUsageErrorNamingThem) {
    // A million partitions keep about 96 MiB of state on their rank: counted,
    // and named, not left to grow outside the limit.
    std::vector<std::string> const shuffle{"shuffle", "--scale", "0.001", "--partitions", "1048576", "--ranks", "1",
                                           "--memory-limit", "64MiB", "--quiet"};
    auto const result = run_spillway(shuffle);
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_THAT(result.err, testing::ContainsRegex("and the state of 1048576 partitions and of the chunks they "
                                                   "receive, 9[6-9]\\.[0-9][0-9] MiB"))
        << "96 MiB of partitions, and the chunks of 6,000 rows";
    EXPECT_THAT(result.err, HasSubstr("or lower --partitions"));
}

TEST(CliShuffle, AnUnwritableSpillDirectoryIsAUsageError) {
    spillway::test::TemporaryDirectory directory;
    auto const file = directory.path() / "file";
    std::ofstream(file) << "x";
    auto const result = run_spillway(small_shuffle("64MiB", {"--spill-dir", (file / "spill").string()}));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_THAT(result.err, HasSubstr((file / "spill").string()));
}

TEST(CliShuffle, SigtermRemovesTheSpillDirectoriesAndEndsWith143) {
    spillway::test::TemporaryDirectory spill;
    spillway::test::ChildProcess child({SPILLWAY_CLI_PATH, "shuffle", "--scale", "0.05", "--ranks", "2",
                                        "--memory-limit", "128MiB", "--spill-dir", spill.path().string()},
                                       {}, true);
    ASSERT_TRUE(wait_until_stalled(child));
    EXPECT_EQ(count_files(spill.path()), 2u) << "a spill directory per rank";
    child.signal(SIGTERM);
    auto const result = child.wait();
    EXPECT_EQ(result.signal, 0) << "the tool ends itself, after removing its spill directories";
    EXPECT_EQ(result.exit_code, 143);
    EXPECT_TRUE(std::filesystem::is_empty(spill.path()));
}

TEST(CliShuffle, RunsInOtherPidNamespacesKeepALiveRunsSpillFilesAndRemoveAKilledRunsWithoutWarnings) {
    spillway::test::TemporaryDirectory spill;
    std::vector<std::string> const shuffle = {"shuffle", "--scale", "0.05", "--ranks", "1", "--memory-limit",
                                              "128MiB", "--spill-dir", spill.path().string(), "--quiet"};
    auto const in_new_pid_namespace = [&] {
        std::vector<std::string> arguments = {"/usr/bin/unshare", "--pid", "--fork", "--kill-child",
                                              SPILLWAY_CLI_PATH};
        arguments.insert(arguments.end(), shuffle.begin(), shuffle.end());
        return arguments;
    };
    spillway::test::ChildProcess stalled({SPILLWAY_CLI_PATH, "shuffle", "--scale", "0.05", "--ranks", "1",
                                          "--memory-limit", "128MiB", "--spill-dir", spill.path().string()},
                                         {}, true);
    ASSERT_TRUE(wait_until_stalled(stalled));
    ASSERT_EQ(count_files(spill.path()), 1u);
    auto const live = std::filesystem::directory_iterator(spill.path())->path();

    // The live run's pid does not exist in these namespaces; its lock does.
    auto const beside = spillway::test::ChildProcess(in_new_pid_namespace()).wait();
    ASSERT_EQ(beside.exit_code, 0) << beside.err;
    EXPECT_TRUE(std::filesystem::exists(live / "owner")) << "a live run's spill directory is kept";

    stalled.signal(SIGKILL);
    EXPECT_EQ(stalled.wait().signal, SIGKILL);
    ASSERT_TRUE(std::filesystem::exists(live)) << "SIGKILL leaves the directory behind";
    auto const next = spillway::test::ChildProcess(in_new_pid_namespace()).wait();
    ASSERT_EQ(next.exit_code, 0) << next.err;
    // (Under ASan, LeakSanitizer may add a line of its own in a PID namespace.)
    EXPECT_THAT(next.err, testing::Not(HasSubstr("spill"))) << "the killed run's directory is removed quietly";
    EXPECT_THAT(next.err, testing::Not(HasSubstr("warn")));
    EXPECT_TRUE(std::filesystem::is_empty(spill.path())) << "the killed run's directory and the run's own are gone";
}

TEST(CliShuffle, BadFlagValuesAreUsageErrorsNamingTheFlag) {
    for (auto const& [flag, value] : std::vector<std::pair<std::string, std::string>>{
             {"--memory-limit", "lots"}, {"--codec", "gzip"}, {"--comm", "tcp"}, {"--ranks", "0"}}) {
        auto const result = run_spillway({"shuffle", flag, value});
        EXPECT_EQ(result.exit_code, 2) << flag;
        EXPECT_THAT(result.err, HasSubstr(flag));
    }
}

#ifdef SPILLWAY_MPIEXEC
/// `spillway shuffle --comm mpi` under `mpirun` with `processes` processes.
/// `spillway shuffle --comm mpi` at scale `scale` in `processes` processes
/// of `mpiexec`, with `extra_environment` (`NAME=value` entries).
spillway::test::ProcessResult run_mpi_shuffle(int processes, std::string const& scale = "0.3",
                                              std::vector<std::string> const& extra_environment = {}) {
    std::vector<std::string> arguments{SPILLWAY_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np",
                                       std::to_string(processes), SPILLWAY_CLI_PATH};
    for (auto& argument : std::vector<std::string>{"shuffle", "--scale", scale, "--memory-limit", "48MiB", "--json",
                                                   "--quiet", "--comm", "mpi", "--threads", "1", "--window", "1"}) {
        arguments.push_back(argument);
    }
    std::vector<std::string> environment{
        "OMPI_MCA_btl=self,vader", "OMPI_MCA_btl_vader_single_copy_mechanism=none",
        "LSAN_OPTIONS=suppressions=" SPILLWAY_LSAN_SUPPRESSIONS ":fast_unwind_on_malloc=0"};
    environment.insert(environment.end(), extra_environment.begin(), extra_environment.end());
    return spillway::test::run_process(arguments, environment);
}

TEST(CliShuffleMpi, AStoppedRankMakesTheOthersNameItAndEndTheJobWithExitCodeOne) {
    spillway::test::TemporaryDirectory spill;
    std::vector<std::string> arguments{SPILLWAY_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", "4",
                                       SPILLWAY_CLI_PATH};
    for (auto& argument : std::vector<std::string>{"shuffle", "--scale", "1", "--memory-limit", "48MiB", "--quiet",
                                                   "--comm", "mpi", "--threads", "1", "--window", "1",
                                                   "--spill-dir", spill.path().string(), "--collective-timeout",
                                                   "3s"}) {
        arguments.push_back(argument);
    }
    spillway::test::ChildProcess job(
        arguments, {"OMPI_MCA_btl=self,vader", "OMPI_MCA_btl_vader_single_copy_mechanism=none",
                    "LSAN_OPTIONS=suppressions=" SPILLWAY_LSAN_SUPPRESSIONS ":fast_unwind_on_malloc=0"});
    // A rank that has spilled is shuffling: stop it then. Its owner file
    // holds its pid.
    pid_t stopped = 0;
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (stopped == 0 && job.running() && std::chrono::steady_clock::now() < deadline) {
        std::error_code ignored;
        for (auto const& directory : std::filesystem::directory_iterator(spill.path(), ignored)) {
            if (std::filesystem::exists(directory.path() / "buffer-0", ignored)) {
                std::ifstream(directory.path() / "owner") >> stopped;
                break;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_GT(stopped, 0) << "no rank spilled";
    std::string stopped_rank;
    {
        std::ifstream environment("/proc/" + std::to_string(stopped) + "/environ");
        for (std::string variable; std::getline(environment, variable, '\0');) {
            if (variable.starts_with("OMPI_COMM_WORLD_RANK=")) {
                stopped_rank = variable.substr(variable.find('=') + 1);
            }
        }
    }
    ASSERT_FALSE(stopped_rank.empty());
    ASSERT_EQ(::kill(stopped, SIGSTOP), 0);
    auto const result = job.wait();
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_THAT(result.err, testing::ContainsRegex("rank " + stopped_rank + " sent nothing for [0-9.]+ s \\("
                                                   "--collective-timeout is 3.0 s\\): it has stopped, hangs or "
                                                   "cannot be reached"));
    // mpirun resumes it to end it: it must not then blame a peer for its own silence.
    EXPECT_THAT(result.err, testing::Not(testing::ContainsRegex("rank [^" + stopped_rank + "] sent nothing")))
        << result.err;
    // mpirun kills it as it ends the job; it is gone, or dead and not yet reaped.
    auto const ended = [stopped] {
        std::ifstream stat("/proc/" + std::to_string(stopped) + "/stat");
        std::string pid;
        std::string name;
        char state = 'X';
        return !(stat >> pid >> name >> state) || state == 'Z' || state == 'X';
    };
    auto const kill_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!ended() && std::chrono::steady_clock::now() < kill_deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(ended()) << "the stopped rank was left behind";
}

TEST(CliShuffleMpi, AVoteWaitsForASlowProcessAndNamesAStoppedOne) {
    // The votes that start and end a job over MPI: one process may take
    // long to get there, but one that stops must not keep the others for ever.
    auto const result = spillway::test::run_process(
        {SPILLWAY_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", "2", SPILLWAY_MPI_AGREEMENT_CHECK},
        {"OMPI_MCA_btl=self,vader", "OMPI_MCA_btl_vader_single_copy_mechanism=none",
         "LSAN_OPTIONS=suppressions=" SPILLWAY_LSAN_SUPPRESSIONS ":fast_unwind_on_malloc=0"});
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_THAT(result.out, HasSubstr("slow vote: all ok")) << "5 s late, but sending heartbeats";
    EXPECT_THAT(result.out, testing::ContainsRegex("stopped vote: PeerTimeout after [0-9][.][0-9] s: rank 1 sent "
                                                   "nothing for [0-9.]+ s while the processes agreed whether each "
                                                   "got through the job \\(collective_timeout is 2.0 s\\)"))
        << result.out;
    EXPECT_THAT(result.out, testing::Not(HasSubstr("stopped vote: ended")));
}

TEST(CliShuffleMpi, TwoProcessesShuffleAndVerify) {
    auto const result = run_mpi_shuffle(2);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    auto const summary = result.summary();
    EXPECT_EQ(summary.at("verified"), true);
    EXPECT_EQ(summary.at("settings").at("comm"), "mpi");
    EXPECT_EQ(summary.at("settings").at("ranks"), 2);
}

TEST(CliShuffleMpi, MpiOptionsOutOfTheirRangeAreUsageErrors) {
    for (auto const* variable : {"SPILLWAY_COMM_MPI_MAX_MESSAGE_BYTES=0", "SPILLWAY_COMM_MPI_MAX_MESSAGE_BYTES=3GiB",
                                 "SPILLWAY_COMM_MPI_SHUTDOWN_TIMEOUT=0"}) {
        auto const result = run_mpi_shuffle(1, "0.001", {variable});
        EXPECT_EQ(result.exit_code, 2) << variable << ": " << result.err;
        EXPECT_THAT(result.err, HasSubstr(std::string(variable).substr(0, std::string(variable).find('='))));
    }
}

TEST(CliShuffleMpi, FourProcessesShuffleAndVerify) {
    auto const result = run_mpi_shuffle(4);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    auto const summary = result.summary();
    EXPECT_EQ(summary.at("verified"), true);
    EXPECT_EQ(summary.at("settings").at("ranks"), 4);
    EXPECT_GT(summary.at("spilled_bytes").get<std::uint64_t>(), 0u);
}
#endif
