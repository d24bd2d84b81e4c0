// filter and project: lambdas over columns, checked row by row.
#include <spillway/query/expressions.hpp>

#include <common/error_matchers.hpp>

#include <gtest/gtest.h>

#include "query_test_support.hpp"

using namespace spillway;
using namespace spillway::query;
using namespace spillway::query::test;

TEST(Filter, KeepsTheRowsThePredicateSelectsInTheirOrder) {
    auto const table = keyed_table(500, 1, "t_");
    auto const all = rows_of(table);
    Predicate const keep_positive = [](table::Table const& t) {
        auto const& count = t.column("t_count");
        auto const values = count.values<std::int32_t>();
        return make_mask(t.num_rows(), [&](std::size_t row) { return !count.is_null(row) && values[row] > 0; });
    };
    auto const filtered = filter(table, keep_positive);
    std::vector<Row> expected;
    for (auto const& row : all) {
        if (row[2] && std::get<std::int64_t>(*row[2]) > 0) {
            expected.push_back(row);
        }
    }
    ASSERT_GT(expected.size(), 100U);
    ASSERT_LT(expected.size(), 400U);
    EXPECT_EQ(filtered.schema(), table.schema());
    EXPECT_EQ(rows_of(filtered), expected);
}

TEST(Filter, OfSomeColumnsIsTheFilterOfThoseColumnsInTheOrderAsked) {
    auto const table = keyed_table(500, 4, "t_");
    auto const count = table.column("t_count").values<std::int32_t>();
    auto const mask = make_mask(table.num_rows(), [&](std::size_t row) { return count[row] % 3 == 0; });
    std::string const columns[] = {"t_tag", "t_key"};
    std::size_t const indices[] = {table.schema().index_of("t_tag"), table.schema().index_of("t_key")};
    auto const some = filter(table, mask, columns);
    EXPECT_EQ(some.schema().to_string(), "t_tag:string, t_key:int64");
    EXPECT_EQ(rows_of(some), rows_of(filter(table, mask).select(indices)));
    EXPECT_EQ(filter(table, RowMask(table.num_rows(), 1), columns).num_rows(), table.num_rows());

    std::string const unknown[] = {"t_key", "t_nothing"};
    EXPECT_THROW_WITH((void)filter(table, mask, unknown), InvalidArgument, "t_nothing");
    std::string const twice[] = {"t_key", "t_key"};
    EXPECT_THROW_WITH((void)filter(table, mask, twice), InvalidArgument, "t_key");
}

TEST(Filter, AMaskOfAnotherLengthIsRejected) {
    auto const table = keyed_table(10, 2, "t_");
    RowMask const mask(9, 1);
    EXPECT_THROW_WITH((void)filter(table, mask), InvalidArgument, "mask has 9 rows for a table of 10");
    EXPECT_THROW_WITH((void)filter(table, Predicate{}), InvalidArgument, "needs a predicate");
}

TEST(Project, ComputesNamedColumnsFromLambdasAndPassesOthersThrough) {
    auto const table = keyed_table(200, 3, "t_");
    ColumnExpression const columns[] = {
        column("t_tag", "tag"),
        {.name = "doubled",
         .compute =
             [](table::Table const& t) {
                 auto const& amount = t.column("t_amount");
                 auto const values = amount.values<double>();
                 return make_column(table::DataType::float64, t.num_rows(), [&](std::size_t row) {
                     return amount.is_null(row) ? 0.0 : 2 * values[row];
                 });
             }},
        column("t_key"),
    };
    auto const projected = project(table, columns);
    ASSERT_EQ(projected.schema().to_string(), "tag:string, doubled:float64, t_key:int64");
    auto const in = rows_of(table);
    auto const out = rows_of(projected);
    ASSERT_EQ(out.size(), in.size());
    for (std::size_t row = 0; row < in.size(); ++row) {
        EXPECT_EQ(out[row][0], in[row][1]);
        double const amount = in[row][3] ? std::get<double>(*in[row][3]) : 0.0;
        EXPECT_EQ(out[row][1], Value(2 * amount));
        EXPECT_EQ(out[row][2], in[row][0]);
    }
}

TEST(Project, ABoolMakesABooleanColumnAndIsWidenedForAnInt32) {
    auto const flags = make_column(table::DataType::boolean, 3, [](std::size_t row) { return row == 1; });
    EXPECT_EQ(flags.type(), table::DataType::boolean);
    EXPECT_EQ(flags.values<std::uint8_t>()[1], 1);
    EXPECT_EQ(flags.values<std::uint8_t>()[2], 0);
    auto const counts = make_column(table::DataType::int32, 3, [](std::size_t row) { return row == 2; });
    EXPECT_EQ(counts.values<std::int32_t>()[2], 1);
    EXPECT_THROW_WITH((void)make_column(table::DataType::int64, 1, [](std::size_t) { return true; }), InvalidArgument,
                      "cannot append this value to a int64 column");
}

TEST(Project, RejectsEmptyExpressionsColumnsOfTheWrongLengthAndRepeatedNames) {
    auto const table = keyed_table(10, 4, "t_");
    ColumnExpression const empty[] = {{.name = "x", .compute = {}}};
    EXPECT_THROW_WITH((void)project(table, empty), InvalidArgument, "the expression of column 'x' is empty");
    ColumnExpression const short_column[] = {
        {.name = "y", .compute = [](table::Table const& t) { return t.column("t_key").slice(0, 3); }}};
    EXPECT_THROW_WITH((void)project(table, short_column), InvalidArgument, "gave 3 rows for a table of 10");
    ColumnExpression const repeated[] = {column("t_key", "k"), column("t_tag", "k")};
    EXPECT_THROW((void)project(table, repeated), InvalidArgument);
    ColumnExpression const missing[] = {column("nope")};
    EXPECT_THROW_WITH((void)project(table, missing), InvalidArgument, "nope");
}
