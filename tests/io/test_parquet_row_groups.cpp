// ParquetRowGroups: a Parquet file's row groups read in any order, by
// several threads at once.
#include <spillway/io/parquet_row_groups.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <thread>
#include <vector>

#include <common/error_matchers.hpp>
#include <common/temporary_directory.hpp>
#include <spillway/core/error.hpp>
#include <spillway/io/table_file.hpp>
#include <spillway/table/table_builder.hpp>

#include <gtest/gtest.h>

#include "random_table.hpp"

using namespace spillway;
using namespace spillway::io;

namespace {

/// Writes `rows` as the Parquet file `path` in row groups of `group_rows` rows.
std::filesystem::path write_row_groups(std::filesystem::path const& path, table::Table const& rows,
                                       std::uint64_t group_rows) {
    WriteOptions options;
    options.row_group_rows = group_rows;
    auto writer = create_table_file(path, FileFormat::parquet, rows.schema(), options);
    writer->write(rows.slice(0, rows.num_rows()));
    writer->close();
    return path;
}

}  // namespace

TEST(ParquetRowGroups, ThreadsReadingRowGroupsInAnyOrderGetTheFileBackWhole) {
    test::TemporaryDirectory directory;
    auto const rows = table::test::random_table(2500, 5, 0.1, 10, table::test::RandomStrings::utf8);
    // Nine groups, the last of 100 rows.
    auto const file = write_row_groups(directory.path() / "rows.parquet", rows, 300);

    ParquetRowGroups const groups(file);
    ASSERT_EQ(groups.size(), 9U);
    EXPECT_EQ(groups.schema(), rows.schema());
    std::vector<table::Table> read(groups.size());
    std::vector<std::thread> threads;
    for (std::size_t thread = 0; thread < 2; ++thread) {
        threads.emplace_back([&, thread] {
            for (std::size_t group = groups.size() - 1 - thread;; group -= 2) {  // from the last group back
                read[group] = groups.read(group);
                if (group < 2) {
                    break;
                }
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    EXPECT_EQ(read[8].num_rows(), 100U);
    EXPECT_EQ(groups.rows(0), 300U);
    EXPECT_EQ(groups.rows(8), 100U);
    EXPECT_THROW_WITH((void)groups.rows(9), InvalidArgument, "row group 9");
    EXPECT_EQ(table::Table::concatenate(read), rows);
    EXPECT_THROW_WITH((void)groups.read(9), InvalidArgument, "row group 9");
    EXPECT_THROW_WITH((void)groups.read(9, std::vector<std::string>{}), InvalidArgument, "row group 9")
        << "even with no columns to read";
}

TEST(ParquetRowGroups, AReaderOfSomeRowGroupsReadsThemInTheOrderAskedInBoundedBatches) {
    test::TemporaryDirectory directory;
    auto const rows = table::test::random_table(200'000, 3, 0.1, 10, table::test::RandomStrings::utf8);
    // Groups of 80000, 80000 and 40000 rows.
    auto const file = write_row_groups(directory.path() / "rows.parquet", rows, 80'000);

    ParquetRowGroups const groups(file);
    ASSERT_EQ(groups.size(), 3U);
    auto reader = groups.reader({2, 0});
    EXPECT_EQ(reader->schema(), rows.schema());
    EXPECT_EQ(reader->rows(), 120'000U);
    std::vector<table::Table> read;
    while (auto table = reader->read()) {
        EXPECT_LE(table->num_rows(), std::size_t{1} << 16);  // a row group is not read whole
        read.push_back(std::move(*table));
    }
    EXPECT_EQ(table::Table::concatenate(read),
              table::Table::concatenate(std::vector{rows.slice(160'000, 40'000), rows.slice(0, 80'000)}));
    EXPECT_EQ(groups.reader({})->read(), std::nullopt);
    EXPECT_THROW_WITH((void)groups.reader({1, 3}), InvalidArgument, "row group 3");
}

TEST(ParquetRowGroups, SmallRowGroupsAreReadTogetherUpToABatchOfRows) {
    test::TemporaryDirectory directory;
    constexpr std::size_t batch_rows = std::size_t{1} << 16;
    // A string column of few values, so written and read as dictionaries,
    // which the library's batches do not carry across row groups.
    table::TableBuilder builder(table::Schema({{"k", table::DataType::int64}, {"code", table::DataType::string}}));
    for (std::int64_t row = 0; row < 150'001; ++row) {
        builder.column(0).append(row);
        builder.column(1).append(std::string(row % 3 == 0 ? "AIR" : "TRUCK"));
    }
    auto const rows = builder.finish();
    // 500 groups of 300 rows and one of 1, read as 501 tables before.
    auto const file = write_row_groups(directory.path() / "rows.parquet", rows, 300);

    // Reads hold up to a batch of rows, and the size told beforehand bounds
    // them without counting the last row group's bytes (its page headers
    // and dictionary, mostly) for a batch's rows.
    auto const read_all = [&](TableFileReader& reader) {
        std::vector<table::Table> read;
        std::size_t largest = 0;
        while (auto table = reader.read()) {
            EXPECT_LE(table->num_rows(), batch_rows);
            largest = std::max(largest, table->byte_size());
            read.push_back(std::move(*table));
        }
        EXPECT_LE(largest, reader.largest_read_bytes());
        EXPECT_LE(reader.largest_read_bytes(), largest * 3 / 2);
        return read;
    };
    auto const batches_of_many_groups = [&](std::vector<table::Table> const& read) {
        EXPECT_EQ(read.size(), 3U);
        for (std::size_t index = 0; index + 1 < read.size(); ++index) {
            EXPECT_GT(read[index].num_rows(), batch_rows - 300);
        }
    };
    auto const whole = read_all(*open_table_file(file, FileFormat::parquet));
    batches_of_many_groups(whole);
    // The first read ends where a row group ends: these are batches of
    // dictionaries, put together (others run across row groups, 65,536
    // rows at a time).
    EXPECT_EQ(whole.front().num_rows() % 300, 0U);
    EXPECT_EQ(table::Table::concatenate(whole), rows);

    // Every other group, as a rank of two reads its share, and backwards.
    ParquetRowGroups const groups(file);
    for (std::size_t first : {0, 1}) {
        std::vector<std::size_t> share;
        for (std::size_t group = first; group < groups.size(); group += 2) {
            share.push_back(group);
        }
        std::vector<table::Table> expected;
        for (auto const group : share) {
            expected.push_back(rows.slice(group * 300, std::min<std::size_t>(300, rows.num_rows() - group * 300)));
        }
        auto const read = read_all(*groups.reader(share));
        EXPECT_EQ(read.size(), 2U);
        EXPECT_EQ(table::Table::concatenate(read), table::Table::concatenate(expected));
    }
    std::vector<std::size_t> backwards(groups.size());
    std::iota(backwards.rbegin(), backwards.rend(), std::size_t{0});
    auto const read = read_all(*groups.reader(backwards));
    batches_of_many_groups(read);
    std::vector<table::Table> expected;
    for (auto const group : backwards) {
        expected.push_back(rows.slice(group * 300, std::min<std::size_t>(300, rows.num_rows() - group * 300)));
    }
    EXPECT_EQ(table::Table::concatenate(read), table::Table::concatenate(expected));
}

TEST(ParquetRowGroups, ARowGroupsColumnsAskedForComeInTheFilesOrderAndOthersAreNotRead) {
    test::TemporaryDirectory directory;
    auto const rows = table::test::random_table(1000, 8, 0.1, 10, table::test::RandomStrings::utf8);
    auto const file = write_row_groups(directory.path() / "rows.parquet", rows, 400);
    ParquetRowGroups const groups(file);
    std::string const asked[] = {"text", "i64"};
    std::size_t const in_file_order[] = {1, 4};
    EXPECT_EQ(groups.read(1, asked), rows.slice(400, 400).select(in_file_order));
    EXPECT_EQ(groups.read(2, asked), rows.slice(800, 200).select(in_file_order));
    EXPECT_EQ(groups.read(0, {}).num_columns(), 0U);
    std::string const missing[] = {"i64", "nope"};
    EXPECT_THROW_WITH((void)groups.read(0, missing), InvalidArgument, "nope");
}

TEST(ParquetRowGroups, ARowGroupWithoutRowsReadsAsATableOfTheFilesColumns) {
    test::TemporaryDirectory directory;
    auto const rows = table::test::random_table(10, 8, 0.1, 10, table::test::RandomStrings::utf8);
    auto const file = write_row_groups(directory.path() / "empty.parquet", rows.slice(0, 0), 400);
    ParquetRowGroups const groups(file);
    ASSERT_EQ(groups.size(), 1U) << "the writer writes the empty table as one row group";
    EXPECT_EQ(groups.read(0), rows.slice(0, 0));
    std::string const asked[] = {"text", "i64"};
    std::size_t const in_file_order[] = {1, 4};
    EXPECT_EQ(groups.read(0, asked), rows.slice(0, 0).select(in_file_order));
}

TEST(ParquetRowGroups, AMissingOrCorruptFileIsRefusedNamingIt) {
    test::TemporaryDirectory directory;
    EXPECT_THROW_WITH(ParquetRowGroups(directory.path() / "missing.parquet"), IoError, "missing.parquet");
    auto const file = directory.path() / "not.parquet";
    std::ofstream(file) << "not parquet at all";
    EXPECT_THROW_WITH(ParquetRowGroups{file}, CorruptData, "not.parquet");
}
