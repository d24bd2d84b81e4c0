// Hash joins checked against a nested-loop join over the same rows.
#include <spillway/query/hash_join.hpp>

#include <common/error_matchers.hpp>

#include <gtest/gtest.h>

#include "query_test_support.hpp"

using namespace spillway;
using namespace spillway::query;
using namespace spillway::query::test;

namespace {

/// The join by nested loops: for each probe row in order, the build rows in
/// order whose key columns (by position) equal its own, none of them null.
std::vector<Row> nested_loop_join(table::Table const& build, std::vector<std::size_t> const& build_keys,
                                  table::Table const& probe, std::vector<std::size_t> const& probe_keys,
                                  JoinKind kind) {
    auto const build_rows = rows_of(build);
    std::vector<Row> result;
    for (auto const& row : rows_of(probe)) {
        bool matched = false;
        for (auto const& other : build_rows) {
            bool equal = true;
            for (std::size_t k = 0; k < probe_keys.size(); ++k) {
                auto const& a = row[probe_keys[k]];
                auto const& b = other[build_keys[k]];
                equal = equal && a && b && *a == *b;
            }
            if (!equal) {
                continue;
            }
            matched = true;
            if (kind == JoinKind::inner) {
                auto joined = row;
                for (std::size_t c = 0; c < other.size(); ++c) {
                    if (std::find(build_keys.begin(), build_keys.end(), c) == build_keys.end()) {
                        joined.push_back(other[c]);
                    }
                }
                result.push_back(std::move(joined));
            }
        }
        if (kind != JoinKind::inner && matched == (kind == JoinKind::semi)) {
            result.push_back(row);
        }
    }
    return result;
}

}  // namespace

TEST(HashJoin, InnerSemiAndAntiJoinsGiveWhatANestedLoopJoinGivesOnOneAndTwoKeys) {
    for (std::uint64_t seed = 0; seed < 6; ++seed) {
        auto const build = keyed_table(60 + seed * 7, seed, "b_");
        // Every other probe side has no nulls (and takes the int64 key's own path).
        auto const probe = keyed_table(300, 100 + seed, "p_", seed % 2 == 0 ? 0.1 : 0.0);
        for (auto const kind : {JoinKind::inner, JoinKind::semi, JoinKind::anti}) {
            std::string const one_build[] = {"b_key"};
            std::string const one_probe[] = {"p_key"};
            auto const one = hash_join(build, one_build, probe, one_probe, kind);
            EXPECT_EQ(rows_of(one), nested_loop_join(build, {0}, probe, {0}, kind)) << "seed " << seed;

            std::string const two_build[] = {"b_tag", "b_key"};
            std::string const two_probe[] = {"p_tag", "p_key"};
            auto const two = hash_join(build, two_build, probe, two_probe, kind);
            EXPECT_EQ(rows_of(two), nested_loop_join(build, {1, 0}, probe, {1, 0}, kind)) << "seed " << seed;

            std::string const integers_build[] = {"b_day", "b_key"};
            std::string const integers_probe[] = {"p_day", "p_key"};
            auto const integers = hash_join(build, integers_build, probe, integers_probe, kind);
            EXPECT_EQ(rows_of(integers), nested_loop_join(build, {4, 0}, probe, {4, 0}, kind)) << "seed " << seed;
            if (kind == JoinKind::inner) {
                EXPECT_EQ(two.schema().to_string(),
                          "p_key:int64, p_tag:string, p_count:int32, p_amount:float64, p_day:date32, "
                          "b_count:int32, b_amount:float64, b_day:date32");
                EXPECT_GT(two.num_rows(), probe.num_rows());  // keys repeat on both sides
            }
        }
    }
}

TEST(HashJoin, ANullKeyMatchesNothingSoAnAntiJoinKeepsItsRow) {
    using table::DataType;
    table::TableBuilder build_builder(table::Schema({{"k", DataType::int64}}));
    build_builder.column(0).append_null();
    build_builder.column(0).append(std::int64_t{1});
    auto const build = build_builder.finish();
    table::TableBuilder probe_builder(table::Schema({{"q", DataType::int64}}));
    probe_builder.column(0).append_null();
    probe_builder.column(0).append(std::int64_t{1});
    probe_builder.column(0).append(std::int64_t{2});
    auto const probe = probe_builder.finish();
    std::string const build_key[] = {"k"};
    std::string const probe_key[] = {"q"};
    EXPECT_EQ(rows_of(hash_join(build, build_key, probe, probe_key, JoinKind::inner)), (std::vector<Row>{{1}}));
    EXPECT_EQ(rows_of(hash_join(build, build_key, probe, probe_key, JoinKind::semi)), (std::vector<Row>{{1}}));
    EXPECT_EQ(rows_of(hash_join(build, build_key, probe, probe_key, JoinKind::anti)),
              (std::vector<Row>{{std::nullopt}, {2}}));
}

TEST(HashJoin, OneBuildSideServesManyProbesAndEmptySidesGiveNoRows) {
    auto const build = keyed_table(40, 7, "b_");
    std::string const build_key[] = {"b_key"};
    JoinHashTable const hash_table(build, build_key);
    std::string const probe_key[] = {"p_key"};
    for (std::uint64_t seed = 0; seed < 3; ++seed) {
        auto const probe = keyed_table(50, seed, "p_");
        EXPECT_EQ(rows_of(hash_table.probe(probe, probe_key, JoinKind::inner)),
                  nested_loop_join(build, {0}, probe, {0}, JoinKind::inner));
    }
    auto const empty_probe = keyed_table(0, 1, "p_");
    EXPECT_EQ(hash_table.probe(empty_probe, probe_key, JoinKind::inner).num_rows(), 0U);
    auto const empty_build = keyed_table(0, 1, "b_");
    auto const probe = keyed_table(20, 9, "p_");
    EXPECT_EQ(hash_join(empty_build, build_key, probe, probe_key, JoinKind::anti).num_rows(), 20U);
    EXPECT_EQ(hash_join(empty_build, build_key, probe, probe_key, JoinKind::inner).num_rows(), 0U);
}

TEST(HashJoin, KeysThatCannotBeComparedOrOutputNamesThatRepeatAreRejected) {
    auto const build = keyed_table(10, 1, "b_");
    auto const probe = keyed_table(10, 2, "p_");
    std::string const build_key[] = {"b_key"};
    std::string const string_key[] = {"p_tag"};
    EXPECT_THROW_WITH((void)hash_join(build, build_key, probe, string_key, JoinKind::inner), InvalidArgument,
                      "key 0 is string on one side and int64 on the other");
    std::string const two_keys[] = {"p_key", "p_tag"};
    EXPECT_THROW_WITH((void)hash_join(build, build_key, probe, two_keys, JoinKind::semi), InvalidArgument,
                      "2 key columns against 1");
    std::string const missing[] = {"p_nope"};
    EXPECT_THROW_WITH((void)hash_join(build, build_key, probe, missing, JoinKind::inner), InvalidArgument, "p_nope");
    EXPECT_THROW_WITH(JoinHashTable(build, {}), InvalidArgument, "no key columns");
    auto const same_names = keyed_table(10, 3, "b_");
    std::string const tag_key[] = {"b_tag"};
    EXPECT_THROW((void)hash_join(build, build_key, same_names, tag_key, JoinKind::inner), InvalidArgument);
}
