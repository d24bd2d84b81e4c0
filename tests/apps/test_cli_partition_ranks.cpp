// `spillway partition --ranks N` and `--comm mpi`: ranks that share the input
// out, shuffle the rows by key and write the partitions they own, end to end.
// Every run is held against the files one rank writes, file by file.

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <spillway/io/table_file.hpp>
#include <spillway/table/table_builder.hpp>
#include <spillway/table/table_checksum.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <common/temporary_directory.hpp>

#include "../table/random_table.hpp"
#include "cli_process.hpp"

using namespace spillway;
using spillway::test::run_process;
using spillway::test::run_spillway;
using testing::HasSubstr;

namespace {

/// The checksum of the rows of each file of `directory`, by file name.
std::map<std::string, table::TableChecksum> file_checksums(std::filesystem::path const& directory) {
    std::map<std::string, table::TableChecksum> checksums;
    for (auto const& file : std::filesystem::directory_iterator(directory)) {
        auto& checksum = checksums[file.path().filename().string()];
        auto reader = io::open_table_file(file.path(), io::format_of(file.path()));
        while (auto table = reader->read()) {
            checksum += table::TableChecksum::of(*table);
        }
    }
    return checksums;
}

/// A table of `rows` rows of two int64 columns: `key`, a tenth as many
/// distinct values as rows, and `value`, the row's number.
table::Table keyed_rows(std::int64_t rows) {
    table::TableBuilder builder(table::Schema({{"key", table::DataType::int64}, {"value", table::DataType::int64}}));
    for (std::int64_t row = 0; row < rows; ++row) {
        builder.column(0).append(row * 7919 % std::max<std::int64_t>(rows / 10, 1));
        builder.column(1).append(row);
    }
    return builder.finish();
}

/// The least memory limit that a refusal's message names ("it needs at
/// least 46.00 MiB"), as the argument of --memory-limit; empty if it names none.
std::string least_limit(std::string const& message) {
    std::string const needs = "it needs at least ";
    auto const from = message.find(needs);
    auto const to = message.find(" MiB", from);
    if (from == std::string::npos || to == std::string::npos) {
        ADD_FAILURE() << "no least limit in: " << message;
        return {};
    }
    return message.substr(from + needs.size(), to - from - needs.size()) + "MiB";
}

class CliPartitionRanks : public testing::Test {
  protected:
    std::filesystem::path path(std::string const& name) const { return directory_.path() / name; }

    /// Writes `table` as the Parquet file `name`, in row groups of `group_rows` rows.
    std::filesystem::path write_parquet(std::string const& name, table::Table table, std::uint64_t group_rows) {
        io::WriteOptions options;
        options.row_group_rows = group_rows;
        auto writer = io::create_table_file(path(name), io::FileFormat::parquet, table.schema(), options);
        writer->write(std::move(table));
        writer->close();
        return path(name);
    }

    /// Runs `spillway partition` with `arguments` after the command, printing
    /// JSON, spilling into this test's directory.
    spillway::test::ProcessResult partition(std::vector<std::string> arguments) const {
        arguments.insert(arguments.begin(), "partition");
        arguments.insert(arguments.end(), {"--json", "--quiet", "--spill-dir", spill_.path().string()});
        return run_spillway(arguments);
    }

    /// Runs `spillway partition` with `arguments` (no limit, no output) under
    /// 1 MiB, which must be refused naming the least limit that works, then
    /// at that limit into the directory `output`, and returns that run.
    spillway::test::ProcessResult partition_at_least_limit(std::vector<std::string> const& arguments,
                                                           std::string const& output) const {
        auto too_small = arguments;
        too_small.insert(too_small.end(), {"--memory-limit", "1MiB", "-o", path("too-small").string()});
        auto const refused = partition(too_small);
        EXPECT_EQ(refused.exit_code, 2) << refused.err;
        auto at_least = arguments;
        at_least.insert(at_least.end(), {"--memory-limit", least_limit(refused.err), "-o", path(output).string()});
        return partition(at_least);
    }

    /// Whether the spill directory holds nothing: every rank removed its own.
    bool spill_directory_is_empty() const { return std::filesystem::is_empty(spill_.path()); }

    test::TemporaryDirectory directory_;
    test::TemporaryDirectory spill_;
};

}  // namespace

TEST_F(CliPartitionRanks, RanksSharingOneParquetFileByRowGroupWriteTheFilesOneRankWrites) {
    auto const input = write_parquet("input.parquet", table::test::random_table(30000, 5, 0.1, 20, table::test::RandomStrings::utf8), 2000);
    auto const one = partition({"-i", input.string(), "-k", "i64,text", "--partitions", "7", "-o",
                                path("one").string()});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    auto const three = partition({"-i", input.string(), "-k", "i64,text", "--partitions", "7", "--ranks", "3",
                                  "-o", path("three").string()});
    ASSERT_EQ(three.exit_code, 0) << three.err;
    auto const summary = three.summary();
    EXPECT_EQ(summary.at("verified"), true);
    EXPECT_EQ(summary.at("rows"), 30000);
    EXPECT_EQ(summary.at("settings").at("ranks"), 3);
    EXPECT_EQ(summary.at("settings").at("comm"), "local");
    EXPECT_EQ(summary.at("peak_memory").at("HOST").at("ranks").size(), 3U);
    EXPECT_GT(summary.at("sent_bytes").get<std::uint64_t>(), 0U);  // the ranks did exchange rows
    auto const files = file_checksums(path("three"));
    EXPECT_EQ(files.size(), 7U);
    EXPECT_EQ(files, file_checksums(path("one")));
    EXPECT_TRUE(spill_directory_is_empty());
}

TEST_F(CliPartitionRanks, CsvFilesAreDealtToTheRanksWholeAndTheOutputKeepsTheirExtensionAndHeader) {
    for (int file = 0; file < 3; ++file) {
        std::ofstream out(path("orders-" + std::to_string(file) + ".txt"));
        out << "id,customer\n";
        for (int row = 0; row < 2000; ++row) {
            out << file * 2000 + row << ",customer " << row % 97 << "\n";
        }
    }
    auto const inputs = path("orders-*.txt").string();
    auto const one = partition({"-i", inputs, "-k", "customer", "--partitions", "4", "-o", path("one").string()});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    auto const two = partition({"-i", inputs, "-k", "customer", "--partitions", "4", "--ranks", "2", "-o",
                                path("two").string()});
    ASSERT_EQ(two.exit_code, 0) << two.err;
    EXPECT_EQ(two.summary().at("rows"), 6000);
    EXPECT_EQ(two.summary().at("settings").at("input_format"), "csv");
    EXPECT_GT(two.summary().at("sent_bytes").get<std::uint64_t>(), 0U);
    std::string header;
    std::getline(std::ifstream(path("two") / "part-00003.txt"), header);
    EXPECT_EQ(header, "id,customer");
    // CSV files are read as text here, by the extension: the same rows in
    // each file, whichever job wrote it.
    EXPECT_EQ(file_checksums(path("two")), file_checksums(path("one")));
}

TEST_F(CliPartitionRanks, RanksWithoutPartitionsAndPartitionsWithoutRowsStillEndWithEveryFile) {
    table::TableBuilder builder(table::Schema({{"key", table::DataType::int64}}));
    for (int row = 0; row < 100; ++row) {
        builder.column(0).append(std::int64_t{42});
    }
    auto const input = write_parquet("one-key.parquet", builder.finish(), 10);
    auto const result = partition({"-i", input.string(), "-k", "key", "--partitions", "3", "--ranks", "5", "-o",
                                   path("out").string()});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.summary().at("verified"), true);
    auto const files = file_checksums(path("out"));
    ASSERT_EQ(files.size(), 3U);
    std::vector<std::uint64_t> rows;
    for (auto const& [name, checksum] : files) {
        rows.push_back(checksum.rows);
    }
    EXPECT_THAT(rows, testing::UnorderedElementsAre(100U, 0U, 0U));
}

TEST_F(CliPartitionRanks, ARankLeftWithEveryRowToWriteIsNotTakenForAStalledOneByThoseDoneEarly) {
    // One key: the rank that owns its partition writes and reads back every
    // row while the others, done at once, wait for its result.
    table::TableBuilder builder(table::Schema({{"key", table::DataType::int64}, {"value", table::DataType::int64}}));
    for (std::int64_t row = 0; row < 3'000'000; ++row) {
        builder.column(0).append(std::int64_t{7});
        builder.column(1).append(row);
    }
    auto const input = write_parquet("one-key.parquet", builder.finish(), 100'000);
    auto const result = partition({"-i", input.string(), "-k", "key", "--partitions", "3", "--ranks", "3",
                                   "--collective-timeout", "500ms", "-o", path("out").string()});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.summary().at("verified"), true);
}

TEST_F(CliPartitionRanks, UnderASmallLimitTheShuffleSpillsAndTheFilesAreStillThoseOfOneRankAndDuckDbAgrees) {
    auto const input = write_parquet("keyed.parquet", keyed_rows(1'500'000), 100'000);
    auto const one = partition({"-i", input.string(), "-k", "key", "--partitions", "8", "-o", path("one").string()});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    // The least limit the job runs in, as a limit below it says: there the
    // ranks' received rows do not all fit.
    auto const two = partition_at_least_limit(
        {"-i", input.string(), "-k", "key", "--partitions", "8", "--ranks", "2", "--threads", "1"}, "two");
    ASSERT_EQ(two.exit_code, 0) << two.err;
    auto const summary = two.summary();
    EXPECT_EQ(summary.at("verified"), true);
    EXPECT_GT(summary.at("spilled_bytes").get<std::uint64_t>(), 0U);
    EXPECT_EQ(file_checksums(path("two")), file_checksums(path("one")));
    EXPECT_TRUE(spill_directory_is_empty());

    auto const check =
        run_process({SPILLWAY_PYTHON, SPILLWAY_DUCKDB_CHECK, "key", input.string(), path("two").string()});
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST_F(CliPartitionRanks, SmallRowGroupsOfDictionariesAreReadTogetherAndRunInTheLeastLimitNamed) {
    // Row groups of 200 rows whose strings are dictionary encoded, read as
    // dictionaries: the library's batches end with each row group. The
    // limit the tool named for them used to be planned for 200-row tables,
    // and the run then failed after waiting for memory.
    table::TableBuilder builder(table::Schema({{"key", table::DataType::int64}, {"mode", table::DataType::string}}));
    for (std::int64_t row = 0; row < 400'000; ++row) {
        builder.column(0).append(row);
        builder.column(1).append(std::string(row % 3 == 0 ? "AIR" : "TRUCK"));
    }
    auto const input = write_parquet("small-groups.parquet", builder.finish(), 200);
    auto const one = partition({"-i", input.string(), "-k", "key", "--partitions", "64", "-o", path("one").string()});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    auto const two =
        partition_at_least_limit({"-i", input.string(), "-k", "key", "--partitions", "64", "--ranks", "2"}, "two");
    ASSERT_EQ(two.exit_code, 0) << two.err;
    EXPECT_EQ(two.summary().at("verified"), true);
    EXPECT_EQ(file_checksums(path("two")), file_checksums(path("one")));
}

TEST_F(CliPartitionRanks, ALimitTooSmallFailsAtOnceNamingTheLeastThatWorksAndMakesNothing) {
    auto const input = write_parquet("keyed.parquet", keyed_rows(200'000), 100'000);
    auto const result = partition({"-i", input.string(), "-k", "key", "--ranks", "4", "--memory-limit", "40MiB",
                                   "-o", path("out").string()});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_THAT(result.err, HasSubstr("memory limit 40.00 MiB is too small to partition on 4 ranks"));
    EXPECT_THAT(result.err, HasSubstr("it needs at least"));
    EXPECT_THAT(result.err, HasSubstr("or lower --ranks"));
    EXPECT_FALSE(std::filesystem::exists(path("out")));
}

TEST_F(CliPartitionRanks, ManySmallBlocksIntoManyPartitionsRunInTheLeastLimitNamed) {
    // 8 MB of CSV in blocks of 64 KiB, each split 1000 ways: every chunk a
    // rank receives keeps its record reserved, spilled or not. The limit the
    // tool named left them out, and the run failed after waiting for memory.
    {
        std::ofstream out(path("rows.csv"));
        out << "id,amount,note\n";
        for (int row = 0; row < 200'000; ++row) {
            out << row << "," << row * 7 << ",some words of text\n";
        }
    }
    auto const arguments = std::vector<std::string>{"-i", path("rows.csv").string(), "-k", "id", "--partitions",
                                                    "1000", "--ranks", "4", "--block-size", "64KiB",
                                                    "--reserve-timeout", "5s"};
    auto const one = partition({"-i", path("rows.csv").string(), "-k", "id", "--partitions", "1000", "-o",
                                path("one").string()});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    auto const four = partition_at_least_limit(arguments, "four");
    ASSERT_EQ(four.exit_code, 0) << four.err;
    EXPECT_EQ(file_checksums(path("four")), file_checksums(path("one")));
}

TEST_F(CliPartitionRanks, ARowThatDoesNotParseFailsTheRunAndLeavesNoOutputNorSpilledData) {
    {
        std::ofstream out(path("rows.csv"));
        out << "id,amount\n";
        for (int row = 0; row < 20000; ++row) {
            out << row << "," << (row == 15000 ? std::string("many") : std::to_string(row)) << "\n";
        }
    }
    auto const result = partition({"-i", path("rows.csv").string(), "-k", "id", "--ranks", "2", "--block-size",
                                   "64KiB", "-o", path("out").string()});
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_THAT(result.err, HasSubstr("many"));
    EXPECT_FALSE(std::filesystem::exists(path("out")));
    EXPECT_TRUE(spill_directory_is_empty());
}

#ifdef SPILLWAY_MPIEXEC
namespace {

/// `spillway partition --comm mpi` with `arguments` under `mpirun` with `processes` processes.
spillway::test::ProcessResult mpi_partition(int processes, std::vector<std::string> const& arguments) {
    std::vector<std::string> command{SPILLWAY_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np",
                                     std::to_string(processes), SPILLWAY_CLI_PATH, "partition", "--comm", "mpi",
                                     "--json", "--quiet", "--threads", "1"};
    command.insert(command.end(), arguments.begin(), arguments.end());
    return run_process(command, {"OMPI_MCA_btl=self,vader", "OMPI_MCA_btl_vader_single_copy_mechanism=none",
                                 "LSAN_OPTIONS=suppressions=" SPILLWAY_LSAN_SUPPRESSIONS ":fast_unwind_on_malloc=0"});
}

}  // namespace

TEST_F(CliPartitionRanks, MpiProcessesWriteTheFilesOneRankWritesIntoOneDirectory) {
    auto const input = write_parquet("keyed.parquet", keyed_rows(100'000), 10'000);
    auto const one = partition({"-i", input.string(), "-k", "key", "--partitions", "5", "-o", path("one").string()});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    auto const mpi = mpi_partition(2, {"-i", input.string(), "-k", "key", "--partitions", "5", "--spill-dir",
                                       spill_.path().string(), "-o", path("mpi").string()});
    ASSERT_EQ(mpi.exit_code, 0) << mpi.err;
    auto const summary = mpi.summary();
    EXPECT_EQ(summary.at("verified"), true);
    EXPECT_EQ(summary.at("settings").at("comm"), "mpi");
    EXPECT_EQ(summary.at("settings").at("ranks"), 2);
    EXPECT_EQ(file_checksums(path("mpi")), file_checksums(path("one")));
    EXPECT_TRUE(spill_directory_is_empty());
}

TEST_F(CliPartitionRanks, MpiProcessesCommitNothingWhenOneCannotWriteItsTrace) {
    auto const input = write_parquet("keyed.parquet", keyed_rows(1000), 100);
    // Rank 1's trace, t-rank1.json, opens (it is /dev/full) but refuses every write.
    std::filesystem::create_symlink("/dev/full", path("t-rank1.json"));
    auto const mpi = mpi_partition(2, {"-i", input.string(), "-k", "key", "--partitions", "5", "--spill-dir",
                                       spill_.path().string(), "--trace", path("t.json").string(), "-o",
                                       path("out").string()});
    EXPECT_EQ(mpi.exit_code, 1) << mpi.err;
    EXPECT_THAT(mpi.err, HasSubstr("rank 1: cannot write trace file"));
    auto const summary = mpi.summary();
    EXPECT_EQ(summary.at("verified"), false);
    EXPECT_EQ(summary.at("exit_code"), 1);
    EXPECT_THAT(summary.at("error").get<std::string>(), HasSubstr("another rank failed"));
    EXPECT_FALSE(std::filesystem::exists(path("out"))) << "rank 0 committed the output of a failed job";
    EXPECT_TRUE(std::filesystem::exists(path("t-rank0.json")));
    EXPECT_TRUE(spill_directory_is_empty());
}

TEST_F(CliPartitionRanks, MpiProcessesRefuseAnOutputDirectoryThatIsNotEmptyAndTouchNothingInIt) {
    auto const input = write_parquet("keyed.parquet", keyed_rows(1000), 100);
    std::filesystem::create_directory(path("out"));
    std::ofstream(path("out") / "kept.txt") << "mine\n";
    auto const mpi = mpi_partition(2, {"-i", input.string(), "-k", "key", "-o", path("out").string()});
    EXPECT_EQ(mpi.exit_code, 2) << mpi.err;
    EXPECT_THAT(mpi.err, HasSubstr("is not empty"));
    std::vector<std::filesystem::path> left;
    for (auto const& entry : std::filesystem::directory_iterator(path("out"))) {
        left.push_back(entry.path().filename());
    }
    EXPECT_THAT(left, testing::ElementsAre("kept.txt"));
}
#endif
