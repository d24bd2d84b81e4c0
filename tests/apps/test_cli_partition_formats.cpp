// `spillway partition` of Parquet and Arrow IPC files, and of CSV into them,
// end to end, with DuckDB reading input and output as an independent check.

#include <algorithm>
#include <filesystem>
#include <fstream>
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

class CliPartitionFormats : public testing::Test {
  protected:
    std::filesystem::path path(std::string const& name) const { return directory_.path() / name; }

    /// Writes `table` as the file `name` in the format its extension implies.
    std::filesystem::path write(std::string const& name, table::Table table) {
        auto writer = io::create_table_file(path(name), io::format_of(name), table.schema());
        writer->write(std::move(table));
        writer->close();
        return path(name);
    }

    /// Runs `spillway partition` with `arguments` after the command, printing JSON.
    static spillway::test::ProcessResult partition(std::vector<std::string> arguments) {
        arguments.insert(arguments.begin(), "partition");
        for (std::string const flag : {"--json", "--quiet", "--memory-limit", "256MiB"}) {
            arguments.push_back(flag);
        }
        return run_spillway(arguments);
    }

    /// Runs the DuckDB check (tests/apps/check_partition_with_duckdb.py).
    static spillway::test::ProcessResult duckdb_check(std::vector<std::string> arguments) {
        arguments.insert(arguments.begin(), {SPILLWAY_PYTHON, SPILLWAY_DUCKDB_CHECK});
        return run_process(arguments);
    }

    test::TemporaryDirectory directory_;
};

/// `users` rows: user_id as `type` (int32 or int64), a name with multi-byte UTF-8.
table::Table users(table::DataType type, int count) {
    table::TableBuilder builder(table::Schema({{"user_id", type}, {"name", table::DataType::string}}));
    for (int user = 1; user <= count; ++user) {
        if (type == table::DataType::int32) {
            builder.column(0).append(std::int32_t{user});
        } else {
            builder.column(0).append(std::int64_t{user});
        }
        builder.column(1).append("naïve 日本 " + std::to_string(user));
    }
    return builder.finish();
}

}  // namespace

TEST_F(CliPartitionFormats, ParquetToParquetKeepsEveryRowOfEveryTypeAndDuckDbAgrees) {
    auto const input = write("input.parquet", table::test::random_table(20000, 3, 0.1, 20, table::test::RandomStrings::utf8));
    auto const result = partition({"-i", input.string(), "-k", "i64,text", "--partitions", "7", "-o",
                                   path("out").string()});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    auto const summary = result.summary();
    EXPECT_EQ(summary.at("verified"), true);
    EXPECT_EQ(summary.at("rows"), 20000);
    EXPECT_EQ(summary.at("settings").at("output_format"), "parquet");
    EXPECT_EQ(summary.at("settings").at("compression"), "zstd");
    EXPECT_TRUE(std::filesystem::exists(path("out") / "part-00006.parquet"));

    // Read back here too: the output holds what the input did.
    table::TableChecksum output;
    for (auto const& file : std::filesystem::directory_iterator(path("out"))) {
        auto reader = io::open_table_file(file.path(), io::FileFormat::parquet);
        while (auto table = reader->read()) {
            output += table::TableChecksum::of(*table);
        }
    }
    auto reader = io::open_table_file(input, io::FileFormat::parquet);
    EXPECT_EQ(output, table::TableChecksum::of(*reader->read()));
}

TEST_F(CliPartitionFormats, DuckDbFindsTheSameRowsAndNoKeySplitAfterCsvToParquet) {
    auto const csv = path("lineitem.csv");
    ASSERT_EQ(run_spillway({"generate", "--scale", "0.01", "-o", csv.string(), "--quiet"}).exit_code, 0);
    auto const parquet = partition({"-i", csv.string(), "-k", "l_orderkey", "--partitions", "4",
                                    "--output-format", "parquet", "-o", path("parquet").string()});
    ASSERT_EQ(parquet.exit_code, 0) << parquet.err;
    // Parquet back to Parquet, by another key, read by DuckDB against its input.
    auto const again = partition({"-i", (path("parquet") / "part-0000[01].parquet").string(),
                                  "-k", "l_partkey", "--partitions", "3", "-o", path("again").string()});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    auto const check = duckdb_check({"l_partkey", (path("parquet") / "part-0000[01].parquet").string(),
                                     path("again").string()});
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
    EXPECT_THAT(check.out, HasSubstr("missing 0, extra 0, keys split across files 0"));
}

TEST_F(CliPartitionFormats, EqualKeysLineUpAcrossCsvParquetAndIntegerWidths) {
    // One table as CSV with user_id inferred as text, one as Parquet int32.
    std::string events = "user_id,event\nunknown,signup\n";
    for (int user = 1; user <= 300; ++user) {
        events += std::to_string(user) + ",login\n";
    }
    std::ofstream(path("events.csv")) << events;
    auto const users32 = write("users.parquet", users(table::DataType::int32, 300));
    ASSERT_EQ(partition({"-i", path("events.csv").string(), "-k", "user_id", "--partitions", "5", "-o",
                         path("events").string()})
                  .exit_code,
              0);
    ASSERT_EQ(partition({"-i", users32.string(), "-k", "user_id", "--partitions", "5", "-o", path("users").string()})
                  .exit_code,
              0);
    auto const check = duckdb_check({"user_id", users32.string(), path("users").string(), path("events").string()});
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
    EXPECT_THAT(check.out, HasSubstr("keys in both tables 300, in differently named files 0"));
}

TEST_F(CliPartitionFormats, ArrowIpcRoundTripsAndConvertsToCsv) {
    auto const input = write("input.arrow", users(table::DataType::int64, 1000));
    auto const arrow = partition({"-i", input.string(), "-k", "user_id", "--partitions", "3", "-o",
                                  path("arrow").string()});
    ASSERT_EQ(arrow.exit_code, 0) << arrow.err;
    EXPECT_TRUE(std::filesystem::exists(path("arrow") / "part-00002.arrow"));
    auto const csv = partition({"-i", input.string(), "-k", "user_id", "--partitions", "3", "--output-format", "csv",
                                "-o", path("csv").string()});
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
    EXPECT_EQ(csv.summary().at("verified"), true);
    std::ifstream first(path("csv") / "part-00000.csv");
    std::string header;
    std::getline(first, header);
    EXPECT_EQ(header, "user_id,name");
}

TEST_F(CliPartitionFormats, CsvOutputOfParquetTakesTheDialectFlags) {
    auto const input = write("input.parquet", users(table::DataType::int64, 100));
    for (bool const ranks : {false, true}) {
        auto const output = path(ranks ? "ranks" : "one");
        std::vector<std::string> arguments{"-i", input.string(), "-k", "user_id", "--partitions", "1",
                                           "--output-format", "csv", "--delimiter", "|", "--header", "false",
                                           "-o", output.string()};
        if (ranks) {
            arguments.insert(arguments.end(), {"--ranks", "2"});
        }
        auto const result = partition(arguments);
        ASSERT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(result.summary().at("verified"), true);
        std::ifstream file(output / "part-00000.csv");
        std::vector<std::string> lines;
        for (std::string line; std::getline(file, line);) {
            lines.push_back(line);
        }
        ASSERT_EQ(lines.size(), 100U) << "no header line";
        EXPECT_NE(std::find(lines.begin(), lines.end(), "1|naïve 日本 1"), lines.end());
    }
}

TEST_F(CliPartitionFormats, AColumnOfInt32InSomeFilesAndInt64InOthersIsReadAsInt64) {
    // A schema that grew: the same users, their ids int32 in the older file.
    auto const older = write("older.parquet", users(table::DataType::int32, 100));
    auto const newer = write("newer.parquet", users(table::DataType::int64, 100));
    auto const alone = partition({"-i", newer.string(), "-k", "user_id", "--partitions", "4", "-o",
                                  path("alone").string()});
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    for (auto const* ranks : {"1", "2"}) {
        auto const output = path(std::string("both-") + ranks);
        auto const both = partition({"-i", older.string() + "," + newer.string(), "-k", "user_id", "--partitions",
                                     "4", "--ranks", ranks, "-o", output.string()});
        ASSERT_EQ(both.exit_code, 0) << both.err;
        EXPECT_EQ(both.summary().at("rows"), 200);
        for (int partition = 0; partition < 4; ++partition) {
            auto const name = "part-0000" + std::to_string(partition) + ".parquet";
            auto reader = io::open_table_file(output / name, io::FileFormat::parquet);
            EXPECT_EQ(reader->schema().to_string(), "user_id:int64, name:string") << "widened in the output too";
            auto const whole = io::open_table_file(path("alone") / name, io::FileFormat::parquet)->rows();
            EXPECT_EQ(reader->rows(), whole.value_or(0) * 2) << "each id's two rows where it alone goes";
        }
    }
}

TEST_F(CliPartitionFormats, BadParquetInputIsAUsageErrorNamingTheFileOrColumn) {
    std::ofstream(path("fake.parquet")) << "user_id,name\n1,x\n";
    auto const fake = partition({"-i", path("fake.parquet").string(), "-k", "user_id", "-o", path("o1").string()});
    EXPECT_EQ(fake.exit_code, 2);
    EXPECT_THAT(fake.err, HasSubstr("fake.parquet' is not a readable Parquet file"));
    EXPECT_EQ(fake.summary().at("verified"), false);
    EXPECT_FALSE(std::filesystem::exists(path("o1")));

    auto const first = write("a.parquet", users(table::DataType::int64, 10));
    table::TableBuilder named(table::Schema({{"user_id", table::DataType::string}, {"name", table::DataType::string}}));
    named.column(0).append("1");
    named.column(1).append("one");
    auto const other = write("b.parquet", named.finish());
    auto const mixed = partition({"-i", first.string() + "," + other.string(), "-k", "user_id", "-o",
                                  path("o2").string()});
    EXPECT_EQ(mixed.exit_code, 2);
    EXPECT_THAT(mixed.err, HasSubstr("column 'user_id' is string in '" + other.string() + "' but int64"));

    auto const schema = partition({"-i", first.string(), "-k", "user_id", "--schema", "user_id:string", "-o",
                                   path("o3").string()});
    EXPECT_EQ(schema.exit_code, 2);
    EXPECT_THAT(schema.err, HasSubstr("--schema applies to CSV input"));

    auto const none = partition({"-i", path("*.nothing").string(), "-k", "user_id", "-o", path("o4").string()});
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_THAT(none.err, HasSubstr("no input file matches '" + path("*.nothing").string() + "'"));
}
