#include <spillway/io/csv_splits.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/io/csv_reader.hpp>
#include <spillway/table/table_builder.hpp>

#include <common/error_matchers.hpp>
#include <common/temporary_directory.hpp>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::io;
using spillway::table::DataType;
using spillway::table::Schema;
using spillway::table::Table;

namespace {

Schema const schema({{"id", DataType::int64}, {"name", DataType::string}, {"price", DataType::float64}});

class CsvSplitsTest : public ::testing::Test {
  protected:
    /// Writes rows `0` to `rows - 1` (`id|name-id|id.5|`) to `name`, the last
    /// one with its line break unless `unterminated`.
    std::filesystem::path write_rows(std::string const& name, int rows, bool unterminated = false) {
        auto const path = directory_.path() / name;
        std::ofstream file(path, std::ios::binary);
        for (int row = 0; row < rows; ++row) {
            file << row << "|name-" << row << '|' << row << ".5|";
            if (row + 1 < rows || !unterminated) {
                file << '\n';
            }
        }
        return path;
    }

    /// Every split of `splits`, read in reverse order and put back in order.
    static Table read_all(CsvSplits const& splits, std::vector<std::string> const& columns) {
        std::vector<Table> tables(splits.size());
        for (auto split = splits.size(); split-- > 0;) {
            tables[split] = splits.read(split, columns);
        }
        return Table::concatenate(tables);
    }

    test::TemporaryDirectory directory_;
};

}  // namespace

TEST_F(CsvSplitsTest, SplitsOfWholeRowsReadInAnyOrderGiveTheFileAsAReaderDoes) {
    std::vector<std::string> const all{"id", "name", "price"};
    for (bool const unterminated : {false, true}) {
        auto const path = write_rows("rows.tbl", 5000, unterminated);
        auto whole = CsvReader(path, CsvOptions::tbl(), schema).read();
        ASSERT_TRUE(whole.has_value());
        for (std::uint64_t const split_bytes : {1, 100, 4096, 1 << 20}) {
            CsvSplits const splits(path, CsvOptions::tbl(), schema, split_bytes);
            EXPECT_EQ(read_all(splits, all), *whole) << split_bytes << (unterminated ? ", unterminated" : "");
            if (split_bytes == 1) {
                EXPECT_EQ(splits.size(), 5000u) << "a split of each row";
            }
            if (split_bytes == 4096) {
                EXPECT_GT(splits.size(), 10u);
                EXPECT_LT(splits.size(), 40u);
            }
        }
    }
}

TEST_F(CsvSplitsTest, OnlyTheColumnsAskedForAreGivenInTheSchemasOrder) {
    CsvSplits const splits(write_rows("rows.tbl", 10), CsvOptions::tbl(), schema, 64);
    auto const some = read_all(splits, {"price", "id"});
    EXPECT_EQ(some.schema().to_string(), "id:int64, price:float64");
    EXPECT_EQ(some.column(1).values<double>()[9], 9.5);
    EXPECT_EQ(read_all(splits, {}).num_columns(), 0u);
    EXPECT_THROW_WITH(static_cast<void>(splits.read(0, std::vector<std::string>{"cost"})), InvalidArgument,
                      "has no column 'cost'; its columns are id:int64, name:string, price:float64");
    EXPECT_THROW_WITH(static_cast<void>(splits.read(splits.size(), std::vector<std::string>{})), InvalidArgument,
                      "which has");
}

TEST_F(CsvSplitsTest, AnEmptyFileHasNoSplits) {
    EXPECT_EQ(CsvSplits(write_rows("empty.tbl", 0), CsvOptions::tbl(), schema, 64).size(), 0u);
}

TEST_F(CsvSplitsTest, ABadRowIsCorruptDataNamingItsLineInTheFile) {
    auto const path = write_rows("rows.tbl", 1000);
    {
        std::ofstream file(path, std::ios::app);
        file << "1000|name-1000|\n1001|name-1001|1001.5|\n";
    }
    CsvSplits const splits(path, CsvOptions::tbl(), schema, 512);
    EXPECT_THROW_WITH(static_cast<void>(read_all(splits, {"id"})), CorruptData, "rows.tbl:1001:");
}

TEST_F(CsvSplitsTest, QuotingAHeaderOrNoFileAreRefused) {
    auto const path = write_rows("rows.tbl", 10);
    EXPECT_THROW_WITH(CsvSplits(path, CsvOptions(), schema, 64), InvalidArgument, "without quotes and without a header");
    EXPECT_THROW_WITH(CsvSplits(path, CsvOptions::tbl(), schema, 0), InvalidArgument, "at least 1 byte");
    EXPECT_THROW_WITH(CsvSplits(directory_.path() / "missing.tbl", CsvOptions::tbl(), schema, 64), IoError,
                      "missing.tbl");
}
