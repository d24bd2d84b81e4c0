// `spillway partition` of Parquet and Arrow IPC files, and of CSV into them,
// end to end, with DuckDB reading input and output as an independent check.

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <spillway/io/table_file.hpp>
#include <spillway/table/boolean_text.hpp>
#include <spillway/table/table_builder.hpp>
#include <spillway/table/date32.hpp>
#include <spillway/table/table_checksum.hpp>
#include <spillway/table/timestamp.hpp>

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

TEST_F(CliPartitionFormats, TimestampAndBooleanKeysLineUpAcrossCsvTextAndParquet) {
    // The same instants and flags, as Parquet nanoseconds in UTC and
    // booleans, and as CSV text in three spellings each (the first row makes
    // the CSV columns text).
    std::int64_t const start = table::to_date32({2024, 3, 10}) * std::int64_t{86'400};
    table::TableBuilder logins(table::Schema({{"at", table::DataType::timestamp_ns_utc},
                                              {"flag", table::DataType::boolean}}));
    std::string visits = "at,flag\nunknown,maybe\n";
    for (int row = 0; row < 300; ++row) {
        auto const seconds = start + row * 7;
        logins.column(0).append(seconds * 1'000'000'000 + (row % 2) * 500'000'000);
        logins.column(1).append(row % 3 == 0);
        char text[table::max_timestamp_chars];
        std::string at(text, table::format_timestamp(seconds * 1'000 + (row % 2) * 500,
                                                     table::DataType::timestamp_ms, text));
        if (row % 3 == 1) {
            at[10] = 'T';
            at += "Z";
        } else if (row % 3 == 2) {
            at = std::string(text, table::format_timestamp((seconds + 3600) * 1'000 + (row % 2) * 500,
                                                           table::DataType::timestamp_ms, text)) + "+01:00";
        }
        static constexpr std::array<std::array<char const*, 3>, 2> spellings{
            {{"false", "False", "FALSE"}, {"true", "True", "TRUE"}}};
        visits += at + "," + spellings[row % 3 == 0 ? 1 : 0][row % 5 % 3] + "\n";
    }
    std::ofstream(path("visits.csv")) << visits;
    auto const parquet = write("logins.parquet", logins.finish());
    for (auto const& [input, output] :
         {std::pair(path("visits.csv"), path("visits")), std::pair(parquet, path("logins"))}) {
        auto const result = partition({"-i", input.string(), "-k", "at,flag", "--partitions", "5", "-o",
                                       output.string()});
        ASSERT_EQ(result.exit_code, 0) << result.err;
    }
    // Each key's file, by the key's microseconds and flag, in each output.
    std::map<std::pair<std::int64_t, bool>, std::string> csv_file;
    std::map<std::pair<std::int64_t, bool>, std::string> parquet_file;
    for (auto const& file : std::filesystem::directory_iterator(path("visits"))) {
        std::ifstream lines(file.path());
        for (std::string line; std::getline(lines, line);) {
            auto const comma = line.find(',');
            if (auto const at = table::parse_timestamp(line.substr(0, comma))) {
                auto const flag = table::parse_boolean(line.substr(comma + 1));
                ASSERT_TRUE(flag.has_value()) << line;
                csv_file[{table::timestamp_microseconds(*at), *flag}] = file.path().stem();
            }
        }
    }
    for (auto const& file : std::filesystem::directory_iterator(path("logins"))) {
        auto reader = io::open_table_file(file.path(), io::FileFormat::parquet);
        while (auto const rows = reader->read()) {
            for (std::size_t row = 0; row < rows->num_rows(); ++row) {
                auto const ticks = rows->column(0).values<std::int64_t>()[row];
                auto const flag = rows->column(1).values<std::uint8_t>()[row] != 0;
                parquet_file[{table::timestamp_microseconds(ticks, table::DataType::timestamp_ns_utc), flag}] =
                    file.path().stem();
            }
        }
    }
    ASSERT_EQ(csv_file.size(), 300U);
    EXPECT_EQ(csv_file, parquet_file);
}

TEST_F(CliPartitionFormats, EveryTypeGoesFromParquetToCsvAndBackUnchanged) {
    auto const rows = table::test::random_table(3000, 8, 0.1, 20, table::test::RandomStrings::utf8);
    auto const input = write("input.parquet", rows);
    auto const csv = partition({"-i", input.string(), "-k", "at_us", "--partitions", "3", "--output-format", "csv",
                                "-o", path("csv").string()});
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
    EXPECT_EQ(csv.summary().at("verified"), true);
    std::string schema;
    for (auto const& field : rows.schema().fields()) {
        schema += (schema.empty() ? "" : ",") + field.name + ":" + std::string(table::to_string(field.type));
    }
    auto const back = partition({"-i", (path("csv") / "*.csv").string(), "-k", "at_us", "--partitions", "3",
                                 "--schema", schema, "--output-format", "parquet", "-o", path("back").string()});
    ASSERT_EQ(back.exit_code, 0) << back.err;
    for (int partition = 0; partition < 3; ++partition) {
        auto const name = "part-0000" + std::to_string(partition);
        auto once = io::open_table_file(path("back") / (name + ".parquet"), io::FileFormat::parquet);
        EXPECT_EQ(once->schema(), rows.schema());
        table::TableChecksum back_sum;
        while (auto const table = once->read()) {
            back_sum += table::TableChecksum::of(*table);
        }
        auto const csv_rows =
            io::open_table_file(path("csv") / (name + ".csv"), io::FileFormat::csv, {}, rows.schema());
        table::TableChecksum csv_sum;
        while (auto const table = csv_rows->read()) {
            csv_sum += table::TableChecksum::of(*table);
        }
        EXPECT_EQ(back_sum, csv_sum) << name << " holds the rows it held as CSV";
        EXPECT_GT(back_sum.rows, 0U);
    }
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

TEST_F(CliPartitionFormats, CsvOutputRowsLongerThanTheBlockSizeReadBack) {
    // --block-size bounds the rows of CSV input; rows written from Parquet
    // may be longer, and verification reads them back in blocks that hold them.
    table::TableBuilder builder(table::Schema({{"k", table::DataType::int64}, {"s", table::DataType::string}}));
    for (std::int64_t key = 1; key <= 3; ++key) {
        builder.column(0).append(key);
        builder.column(1).append(std::string(static_cast<std::size_t>(100 * key), 'x'));
    }
    auto const input = write("long.parquet", builder.finish());
    for (auto const* ranks : {"1", "2"}) {
        auto const output = path(std::string("long-") + ranks);
        auto const result = partition({"-i", input.string(), "-k", "k", "--partitions", "2", "--block-size", "64",
                                       "--output-format", "csv", "--ranks", ranks, "-o", output.string()});
        ASSERT_EQ(result.exit_code, 0) << result.err;
        EXPECT_EQ(result.summary().at("verified"), true);
        EXPECT_EQ(result.summary().at("rows"), 3);
    }
}

TEST_F(CliPartitionFormats, ACompressionTheOutputFormatLacksIsAUsageErrorNamingTheFlag) {
    auto const input = write("input.parquet", users(table::DataType::int64, 10));
    for (auto const* ranks : {"1", "2"}) {
        for (auto const* codec : {"gzip", "snappy"}) {
            auto const output = path(std::string("out-") + ranks + codec);
            auto const result = partition({"-i", input.string(), "-k", "user_id", "--output-format", "arrow",
                                           "--compression", codec, "--ranks", ranks, "-o", output.string()});
            EXPECT_EQ(result.exit_code, 2) << ranks << " " << codec << ": " << result.err;
            EXPECT_THAT(result.err, HasSubstr(std::string("--compression ") + codec + ": unknown compression '"
                                              + codec + "'; Arrow IPC files take none,zstd,lz4"));
            EXPECT_FALSE(std::filesystem::exists(output)) << "refused before any output";
        }
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
