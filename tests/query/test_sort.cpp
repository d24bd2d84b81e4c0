// sort and top_k checked against std::stable_sort of the rows.
#include <spillway/query/sort.hpp>

#include <algorithm>

#include <common/error_matchers.hpp>

#include <gtest/gtest.h>

#include "query_test_support.hpp"

using namespace spillway;
using namespace spillway::query;
using namespace spillway::query::test;

namespace {

/// The model order: by t_tag ascending, then t_amount descending, then
/// t_day ascending, nulls last in each.
std::vector<Row> model_sort(table::Table const& table) {
    auto rows = rows_of(table);
    auto const compare = [](Value const& a, Value const& b, bool descending) {
        if (!a || !b) {
            return static_cast<int>(!a) - static_cast<int>(!b);
        }
        int const order = *a < *b ? -1 : (*b < *a ? 1 : 0);
        return descending ? -order : order;
    };
    std::stable_sort(rows.begin(), rows.end(), [&](Row const& x, Row const& y) {
        for (auto [column, descending] : {std::pair{1, false}, std::pair{3, true}, std::pair{4, false}}) {
            if (int const order = compare(x[column], y[column], descending); order != 0) {
                return order < 0;
            }
        }
        return false;
    });
    return rows;
}

SortKey const order[] = {{"t_tag"}, {"t_amount", true}, {"t_day"}};

}  // namespace

TEST(Sort, OrdersByEachKeyInTurnNullsLastAndKeepsTheOrderOfTies) {
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
        // Amounts of few distinct values, so that later keys and ties matter.
        auto const table = keyed_table(1500, seed, "t_", 0.2);
        EXPECT_EQ(rows_of(sort(table, order)), model_sort(table)) << "seed " << seed;
    }
}

TEST(TopK, IsThePrefixOfTheSortAndTheTopOfChunkTopsIsTheTopOfAll) {
    auto const table = keyed_table(2000, 5, "t_", 0.2);
    auto const sorted = model_sort(table);
    for (std::size_t const k : {0UL, 1UL, 10UL, 1999UL, 2000UL, 2500UL}) {
        auto const top = rows_of(top_k(table, order, k));
        std::vector<Row> const expected(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(k, 2000)));
        EXPECT_EQ(top, expected) << "k = " << k;
    }
    std::vector<table::Table> tops;
    for (std::size_t begin = 0; begin < 2000; begin += 300) {
        tops.push_back(top_k(table.slice(begin, std::min<std::size_t>(300, 2000 - begin)), order, 25));
    }
    auto const top = rows_of(top_k(table::Table::concatenate(tops), order, 25));
    EXPECT_EQ(top, std::vector<Row>(sorted.begin(), sorted.begin() + 25));
}

TEST(Sort, NeedsKeysThatAreColumns) {
    auto const table = keyed_table(5, 1, "t_");
    EXPECT_THROW_WITH((void)sort(table, {}), InvalidArgument, "at least one key");
    SortKey const missing[] = {{"t_nope"}};
    EXPECT_THROW_WITH((void)top_k(table, missing, 3), InvalidArgument, "t_nope");
}
