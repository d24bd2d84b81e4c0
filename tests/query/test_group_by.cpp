// group_by checked against a map-based model, in one phase and in two.
#include <spillway/query/group_by.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <utility>

#include <common/error_matchers.hpp>
#include <spillway/table/table_builder.hpp>

#include <gtest/gtest.h>

#include "query_test_support.hpp"

using namespace spillway;
using namespace spillway::query;
using namespace spillway::query::test;

namespace {

/// Aggregates over every column kind: sum of int32 and float64, counts of
/// rows and of values, min and max of a string, a date and a double.
std::vector<Aggregate> every_aggregate() {
    return {{AggregateKind::sum, "t_count", "sum_count"},   {AggregateKind::sum, "t_amount", "sum_amount"},
            {AggregateKind::count, "", "rows"},             {AggregateKind::count, "t_amount", "amounts"},
            {AggregateKind::min, "t_tag", "min_tag"},       {AggregateKind::max, "t_tag", "max_tag"},
            {AggregateKind::min, "t_day", "first_day"},     {AggregateKind::max, "t_amount", "max_amount"}};
}

/// The model: groups by (t_key, t_day) in order of first appearance, each
/// aggregate folded over the rows in order.
std::vector<Row> model_group_by(table::Table const& table) {
    auto const rows = rows_of(table);
    std::vector<Row> keys;
    std::vector<std::vector<Row const*>> members;
    for (auto const& row : rows) {
        Row const key{row[0], row[4]};
        auto const group = static_cast<std::size_t>(std::find(keys.begin(), keys.end(), key) - keys.begin());
        if (group == keys.size()) {
            keys.push_back(key);
            members.emplace_back();
        }
        members[group].push_back(&row);
    }
    std::vector<Row> result;
    for (std::size_t g = 0; g < keys.size(); ++g) {
        Value sum_count, sum_amount, min_tag, max_tag, first_day, max_amount;
        std::int64_t values = 0;
        for (auto const* row : members[g]) {
            auto const& count = (*row)[2];
            auto const& amount = (*row)[3];
            auto const& tag = (*row)[1];
            auto const& day = (*row)[4];
            if (count) {
                sum_count = std::get<std::int64_t>(sum_count.value_or(std::int64_t{0})) + std::get<std::int64_t>(*count);
            }
            if (amount) {
                ++values;
                sum_amount = std::get<double>(sum_amount.value_or(0.0)) + std::get<double>(*amount);
                if (!max_amount || std::get<double>(*amount) > std::get<double>(*max_amount)) {
                    max_amount = amount;
                }
            }
            if (tag && (!min_tag || std::get<std::string>(*tag) < std::get<std::string>(*min_tag))) {
                min_tag = tag;
            }
            if (tag && (!max_tag || std::get<std::string>(*tag) > std::get<std::string>(*max_tag))) {
                max_tag = tag;
            }
            if (day && (!first_day || std::get<std::int64_t>(*day) < std::get<std::int64_t>(*first_day))) {
                first_day = day;
            }
        }
        result.push_back({keys[g][0], keys[g][1], sum_count, sum_amount,
                          std::int64_t(members[g].size()), values, min_tag, max_tag, first_day, max_amount});
    }
    return result;
}

std::string const group_keys[] = {"t_key", "t_day"};

}  // namespace

TEST(GroupBy, GivesWhatAMapOfGroupsGivesInTheOrderKeysFirstAppearNullKeysAGroupOfTheirOwn) {
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
        // Every other table has no nulls.
        auto const table = keyed_table(2000, seed, "t_", seed % 2 == 0 ? 0.15 : 0.0);
        auto const aggregates = every_aggregate();
        auto const grouped = group_by(table, group_keys, aggregates);
        EXPECT_EQ(grouped.schema().to_string(),
                  "t_key:int64, t_day:date32, sum_count:int64, sum_amount:float64, rows:int64, amounts:int64, "
                  "min_tag:string, max_tag:string, first_day:date32, max_amount:float64");
        auto const expected = model_group_by(table);
        ASSERT_GT(expected.size(), 100U);
        EXPECT_EQ(rows_of(grouped), expected) << "seed " << seed;
    }
}

TEST(GroupBy, ByOneInt64KeyWithoutNullsGivesEachKeysCountAndSumInTheOrderKeysFirstAppear) {
    auto const table = keyed_table(2000, 3, "t_", 0.0);
    std::string const key[] = {"t_key"};
    std::vector<Aggregate> const aggregates = {{AggregateKind::count, "", "rows"},
                                               {AggregateKind::sum, "t_count", "sum_count"}};
    std::vector<Row> expected;
    for (auto const& row : rows_of(table)) {
        auto found = std::find_if(expected.begin(), expected.end(), [&](Row const& group) { return group[0] == row[0]; });
        if (found == expected.end()) {
            expected.push_back({row[0], std::int64_t{0}, std::int64_t{0}});
            found = std::prev(expected.end());
        }
        (*found)[1] = std::get<std::int64_t>(*(*found)[1]) + 1;
        (*found)[2] = std::get<std::int64_t>(*(*found)[2]) + std::get<std::int64_t>(*row[2]);
    }
    ASSERT_EQ(expected.size(), 8U);
    EXPECT_EQ(rows_of(group_by(table, key, aggregates)), expected);
}

TEST(GroupBy, KeysOfShortStringsAndDatesGroupAsTheirValuesWhateverTheirLengthsOrSigns) {
    // A string of up to 3 bytes and a date pack into one integer per row;
    // "a", "a\0" and "" must still be three keys, and 1 and 65537 two days.
    table::Schema const schema({{"flag", table::DataType::string},
                                {"day", table::DataType::date32},
                                {"amount", table::DataType::int64}});
    std::vector<std::string> const flags = {"a", std::string("a\0", 2), "", "ab", "abc", "b"};
    std::vector<std::int32_t> const days = {-1, 0, 1, 65537};
    // Each key's count and sum, in the order keys first appear.
    auto const expected_groups = [&](table::Table const& table) {
        std::vector<std::pair<std::pair<std::string, std::int32_t>, std::pair<std::int64_t, std::int64_t>>> groups;
        for (std::size_t row = 0; row < table.num_rows(); ++row) {
            std::pair const key{std::string(table.column(0).string(row)), table.column(1).values<std::int32_t>()[row]};
            auto found = std::find_if(groups.begin(), groups.end(), [&](auto const& group) { return group.first == key; });
            if (found == groups.end()) {
                groups.push_back({key, {0, 0}});
                found = std::prev(groups.end());
            }
            found->second.first += 1;
            found->second.second += table.column(2).values<std::int64_t>()[row];
        }
        std::vector<Row> rows;
        for (auto const& [key, totals] : groups) {
            rows.push_back({key.first, std::int64_t{key.second}, totals.first, totals.second});
        }
        return rows;
    };
    std::vector<Aggregate> const aggregates = {{AggregateKind::count, "", "rows"},
                                               {AggregateKind::sum, "amount", "total"}};
    std::string const keys[] = {"flag", "day"};
    for (bool const with_a_long_flag : {false, true}) {
        table::TableBuilder builder(schema);
        for (std::int64_t row = 0; row < 500; ++row) {
            auto const& flag = flags[static_cast<std::size_t>(row % 6)];
            builder.column(0).append(with_a_long_flag && row == 250 ? flag + "-4bytes" : flag);
            builder.column(1).append(days[static_cast<std::size_t>(row / 6 % 4)]);
            builder.column(2).append(row);
        }
        auto const table = builder.finish();
        auto const expected = expected_groups(table);
        ASSERT_EQ(expected.size(), with_a_long_flag ? 25U : 24U);
        EXPECT_EQ(rows_of(group_by(table, keys, aggregates)), expected) << "with a long flag: " << with_a_long_flag;
    }
}

TEST(GroupBy, BooleansAndTimestampsAreKeysAndHaveAMinimumAndAMaximum) {
    table::TableBuilder builder(table::Schema({{"flag", table::DataType::boolean},
                                               {"at", table::DataType::timestamp_ns_utc},
                                               {"seen", table::DataType::boolean}}));
    // Groups true (rows 0, 2, 4) and false (1, 3); `seen` is null in row 4.
    for (std::int64_t row = 0; row < 5; ++row) {
        builder.column(0).append(row % 2 == 0);
        builder.column(1).append(row * 1'000 - 2'000);
        if (row == 4) {
            builder.column(2).append_null();
        } else {
            builder.column(2).append(row == 2 || row == 3);
        }
    }
    std::string const key[] = {"flag"};
    std::vector<Aggregate> const aggregates = {{AggregateKind::min, "at", "first"}, {AggregateKind::max, "at", "last"},
                                               {AggregateKind::min, "seen", "all_seen"},
                                               {AggregateKind::max, "seen", "any_seen"}};
    auto const result = group_by(builder.finish(), key, aggregates);
    EXPECT_EQ(result.schema().to_string(),
              "flag:boolean, first:timestamp_ns_utc, last:timestamp_ns_utc, all_seen:boolean, any_seen:boolean");
    EXPECT_EQ(rows_of(result), (std::vector<Row>{{std::int64_t{1}, std::int64_t{-2'000}, std::int64_t{2'000},
                                                  std::int64_t{0}, std::int64_t{1}},
                                                 {std::int64_t{0}, std::int64_t{-1'000}, std::int64_t{1'000},
                                                  std::int64_t{0}, std::int64_t{1}}}));
}

TEST(GroupBy, AKeyOfOnlyEmptyStringsIsOneGroup) {
    table::TableBuilder builder(table::Schema({{"flag", table::DataType::string}}));
    for (int row = 0; row < 3; ++row) {
        builder.column(0).append("");
    }
    std::string const key[] = {"flag"};
    std::vector<Aggregate> const count = {{AggregateKind::count, "", "rows"}};
    EXPECT_EQ(rows_of(group_by(builder.finish(), key, count)), (std::vector<Row>{{std::string(), std::int64_t{3}}}));
}

TEST(GroupBy, PartialResultsOfChunksMergeIntoTheResultOfTheWholeTable) {
    auto const table = keyed_table(3000, 11, "t_", 0.15);
    auto const aggregates = every_aggregate();
    std::vector<table::Table> partials;
    for (std::size_t begin = 0; begin < table.num_rows(); begin += 700) {
        auto const chunk = table.slice(begin, std::min<std::size_t>(700, table.num_rows() - begin));
        partials.push_back(group_by(chunk, group_keys, aggregates));
    }
    auto const merged = group_by(table::Table::concatenate(partials), group_keys, merging_aggregates(aggregates));
    // The merged groups come in the order their keys first appear too.
    expect_rows_near(rows_of(merged), model_group_by(table), 1e-12);
}

TEST(GroupBy, WithoutKeysTheWholeTableIsOneGroupEvenWhenItHasNoRows) {
    std::vector<Aggregate> const aggregates = {{AggregateKind::count, "", "rows"},
                                               {AggregateKind::sum, "t_count", "total"},
                                               {AggregateKind::max, "t_tag", "last"}};
    auto const empty = group_by(keyed_table(0, 1, "t_"), {}, aggregates);
    EXPECT_EQ(rows_of(empty), (std::vector<Row>{{std::int64_t{0}, std::nullopt, std::nullopt}}));
    auto const table = keyed_table(100, 2, "t_", 0);
    auto const whole = rows_of(group_by(table, {}, aggregates));
    ASSERT_EQ(whole.size(), 1U);
    EXPECT_EQ(whole[0][0], Value(std::int64_t{100}));
    EXPECT_EQ(whole[0][2], Value(std::string("red")));
}

TEST(GroupBy, AggregatesThatDoNotApplyAndSumsThatOverflowAreRejected) {
    auto const table = keyed_table(10, 3, "t_", 0);
    std::vector<Aggregate> const sum_of_strings = {{AggregateKind::sum, "t_tag", "s"}};
    EXPECT_THROW_WITH((void)group_by(table, group_keys, sum_of_strings), InvalidArgument,
                      "cannot sum column 't_tag' of type string");
    std::vector<Aggregate> const missing = {{AggregateKind::min, "t_nope", "m"}};
    EXPECT_THROW_WITH((void)group_by(table, group_keys, missing), InvalidArgument, "t_nope");
    std::vector<Aggregate> const repeated = {{AggregateKind::min, "t_count", "t_key"}};
    EXPECT_THROW((void)group_by(table, group_keys, repeated), InvalidArgument);

    table::TableBuilder builder(table::Schema({{"v", table::DataType::int64}}));
    builder.column(0).append(std::numeric_limits<std::int64_t>::max());
    builder.column(0).append(std::int64_t{1});
    std::vector<Aggregate> const sum = {{AggregateKind::sum, "v", "total"}};
    EXPECT_THROW_WITH((void)group_by(builder.finish(), {}, sum), InvalidArgument, "overflows int64");
}

TEST(GroupBy, ASumOfDoublesWithoutNullsIsTheirSumToTheSignOfZero) {
    table::TableBuilder builder(table::Schema({{"k", table::DataType::int64}, {"v", table::DataType::float64}}));
    std::pair<std::int64_t, double> const rows[] = {{1, -0.0}, {2, 1.5}, {1, -0.0}, {3, -0.0}, {3, 0.0},
                                                    {2, -2.0}, {4, std::numeric_limits<double>::quiet_NaN()}};
    for (auto const& [key, value] : rows) {
        builder.column(0).append(key);
        builder.column(1).append(value);
    }
    std::string const key[] = {"k"};
    std::vector<Aggregate> const sum = {{AggregateKind::sum, "v", "total"}};
    auto const grouped = group_by(builder.finish(), key, sum);
    auto const totals = grouped.column("total").values<double>();
    ASSERT_EQ(totals.size(), 4U);
    EXPECT_TRUE(totals[0] == 0.0 && std::signbit(totals[0])) << "-0.0 + -0.0 is -0.0";
    EXPECT_EQ(totals[1], -0.5);
    EXPECT_TRUE(totals[2] == 0.0 && !std::signbit(totals[2])) << "-0.0 + 0.0 is 0.0";
    EXPECT_TRUE(std::isnan(totals[3]));
}
