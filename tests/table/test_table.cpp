#include <spillway/table/table_builder.hpp>

#include <vector>

#include <common/error_matchers.hpp>

#include <gtest/gtest.h>

#include "random_table.hpp"

using namespace spillway;
using namespace spillway::table;
using spillway::table::test::random_table;

TEST(DataType, NamesRoundTripAndUnknownNamesListTheTypes) {
    for (std::uint8_t code = 1; is_data_type(code); ++code) {
        auto const type = static_cast<DataType>(code);
        EXPECT_EQ(parse_data_type(to_string(type)), type);
    }
    EXPECT_EQ(parse_data_type("Timestamp_US_UTC"), DataType::timestamp_us_utc);
    EXPECT_EQ(parse_data_type("INT64"), DataType::int64);
    EXPECT_THROW_WITH(parse_data_type("decimal"), InvalidArgument,
                      "unknown column type 'decimal'; the types are int32, int64, float64, date32, string, "
                      "boolean, timestamp_ms, timestamp_us, timestamp_ns, timestamp_ms_utc, timestamp_us_utc and "
                      "timestamp_ns_utc");
}

TEST(Schema, FindsColumnsByNameAndRejectsDuplicates) {
    Schema const schema({{"a", DataType::int32}, {"b", DataType::string}});
    EXPECT_EQ(schema.index_of("b"), 1u);
    EXPECT_FALSE(schema.find("c").has_value());
    EXPECT_THROW_WITH(static_cast<void>(schema.index_of("c")), InvalidArgument,
                      "no column is named 'c'; the columns are a:int32, b:string");
    EXPECT_THROW_WITH(static_cast<void>(Schema().index_of("c")), InvalidArgument,
                      "no column is named 'c'; there are no columns");
    EXPECT_THROW_WITH(Schema({{"a", DataType::int32}, {"a", DataType::int64}}), InvalidArgument,
                      "two columns are named 'a'");
}

TEST(Table, RejectsColumnsThatDoNotMatchTheSchema) {
    Schema const schema({{"a", DataType::int32}, {"b", DataType::int64}});
    ColumnBuilder a(DataType::int32);
    a.append(std::int32_t{1});
    ColumnBuilder b(DataType::int64);
    auto const one_row = a.finish();
    auto const no_rows = b.finish();
    EXPECT_THROW_WITH(Table(schema, {one_row}), InvalidArgument, "1 columns for a schema of 2 fields");
    EXPECT_THROW_WITH(Table(schema, {one_row, one_row}), InvalidArgument,
                      "column 'b' is int64 in the schema but the column is int32");
    EXPECT_THROW_WITH(Table(schema, {one_row, no_rows}), InvalidArgument,
                      "column 'b' has 0 rows but column 'a' has 1");
}

TEST(Table, FindsColumnsByIndexAndName) {
    auto const table = random_table(10, 1);
    EXPECT_EQ(table.num_rows(), 10u);
    EXPECT_EQ(table.num_columns(), 12u);
    EXPECT_EQ(&table.column("text"), &table.column(4));
    EXPECT_THROW_WITH(static_cast<void>(table.column(12)), InvalidArgument, "column 12 of a table of 12 columns");
    EXPECT_THROW_WITH(static_cast<void>(table.column("nope")), InvalidArgument, "no column is named 'nope'");
    EXPECT_GT(table.byte_size(), 10u * (4 + 8 + 8 + 4 + 4));
}

TEST(Table, ConcatenatingSlicesGivesBackTheTable) {
    auto const table = random_table(1000, 2, 0.3);
    std::vector<Table> parts;
    for (std::size_t begin = 0; begin < 1000;) {
        auto const count = std::min<std::size_t>(1000 - begin, 1 + begin % 97);
        parts.push_back(table.slice(begin, count));
        begin += count;
    }
    EXPECT_EQ(Table::concatenate(parts), table);
    EXPECT_EQ(Table::concatenate({}), Table());
}

TEST(Table, ConcatenateMixesPartsWithAndWithoutNulls) {
    auto const with_nulls = random_table(21, 3, 0.5);
    auto const without_nulls = random_table(13, 4, 0.0);
    std::vector<Table> const parts{without_nulls, with_nulls, without_nulls};
    auto const joined = Table::concatenate(parts);
    EXPECT_EQ(joined.slice(0, 13), without_nulls);
    EXPECT_EQ(joined.slice(13, 21), with_nulls);
    EXPECT_EQ(joined.slice(34, 13), without_nulls);
}

TEST(Table, ConcatenateRejectsDifferentSchemas) {
    std::vector<std::size_t> const first{0};
    std::vector<Table> const parts{random_table(2, 5), random_table(2, 5).select(first)};
    EXPECT_THROW_WITH(static_cast<void>(Table::concatenate(parts)), InvalidArgument, "cannot concatenate");
}

TEST(Table, TakeAndSelectCopyRowsAndColumnsInTheOrderGiven) {
    auto const table = random_table(50, 6);
    std::vector<std::uint32_t> const rows{49, 0, 7, 7};
    auto const taken = table.take(rows);
    ASSERT_EQ(taken.num_rows(), 4u);
    EXPECT_EQ(taken.slice(0, 1), table.slice(49, 1));
    EXPECT_EQ(taken.slice(2, 1), table.slice(7, 1));
    EXPECT_EQ(taken.slice(3, 1), table.slice(7, 1));

    std::vector<std::size_t> const columns{4, 0};
    auto const selected = table.select(columns);
    EXPECT_EQ(selected.schema().to_string(), "text:string, i32:int32");
    EXPECT_EQ(selected.column(0), table.column(4));
    std::vector<std::size_t> const repeated{1, 1};
    EXPECT_THROW_WITH(static_cast<void>(table.select(repeated)), InvalidArgument, "column 1 is selected twice");
}

TEST(Table, ReleasedColumnsAreTheTablesOwnBuffersAndLeaveItEmpty) {
    auto table = random_table(500, 3);
    auto const copy = table;
    auto const* first_data = table.column(0).data_buffer().data();
    auto columns = std::move(table).release_columns();
    EXPECT_EQ(columns.front().data_buffer().data(), first_data) << "moved, not copied";
    EXPECT_EQ(Table(copy.schema(), std::move(columns)), copy);
    EXPECT_EQ(table.num_columns(), 0U);  // NOLINT(bugprone-use-after-move): left empty, as documented
    EXPECT_EQ(table.num_rows(), 0U);
    EXPECT_EQ(table.schema().size(), 0U);
}

TEST(TableBuilder, RejectsColumnsOfDifferentLengths) {
    TableBuilder builder(Schema({{"a", DataType::int32}, {"b", DataType::int32}}));
    builder.column(0).append(std::int32_t{1});
    EXPECT_THROW_WITH(static_cast<void>(builder.column(2)), InvalidArgument, "column 2 of a table of 2 columns");
    EXPECT_THROW_WITH(static_cast<void>(builder.finish()), InvalidArgument,
                      "column 1 ('b') has 0 values but column 0 ('a') has 1");
    builder.column(1).append(std::int32_t{2});
    auto const table = builder.finish();
    ASSERT_EQ(table.num_rows(), 1u) << "the values appended before the failed finish are kept";
    EXPECT_EQ(table.column(1).values<std::int32_t>()[0], 2);
}
