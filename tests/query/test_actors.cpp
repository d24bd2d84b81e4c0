// The operators as actors: each pipeline's result against the same operator
// applied to whole tables, on a real thread pool.
#include <spillway/query/actors.hpp>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include <common/error_matchers.hpp>
#include <common/watchdog.hpp>
#include <spillway/comm/local_communicator.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/query/group_by.hpp>
#include <spillway/query/sort.hpp>
#include <spillway/shuffle/shuffler.hpp>
#include <spillway/stream/collectives.hpp>
#include <stream/stream_test_support.hpp>

#include <gtest/gtest.h>

#include "query_test_support.hpp"

using namespace spillway;
using namespace spillway::query;
using namespace spillway::query::test;
using spillway::test::StreamMemory;
using spillway::test::kibibyte;

namespace {

/// Table `index` of a source of `keyed_table`s of 200 rows, prefix `prefix`.
TableMaker keyed_tables(std::string prefix) {
    return [prefix = std::move(prefix)](std::size_t index) { return keyed_table(200, index, prefix); };
}

/// The concatenation of `keyed_tables(prefix)` of `indices`.
table::Table concatenated(std::string const& prefix, std::vector<std::size_t> const& indices) {
    std::vector<table::Table> tables;
    for (auto const index : indices) {
        tables.push_back(keyed_table(200, index, prefix));
    }
    return table::Table::concatenate(tables);
}

/// The rows of `table` in sorted order, to compare results whose order is
/// not specified.
std::vector<Row> sorted_rows(table::Table const& table) {
    auto rows = rows_of(table);
    std::sort(rows.begin(), rows.end());
    return rows;
}

}  // namespace

TEST(QueryActors, SendTablesTakesEveryStepthTableFromItsFirstAndCollectTableConcatenatesThemInOrder) {
    spillway::test::Watchdog const watchdog("send_tables into collect_table");
    StreamMemory memory;
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    stream::Context context(pool, memory.resource);
    stream::Channel tables(context, stream::ChannelLimits{.messages = 2});
    table::Table result;
    std::vector<stream::Actor> actors;
    actors.push_back(send_tables(tables, 11, keyed_tables("t_"), 1, 3));
    actors.push_back(collect_table(tables, result));
    stream::run_actors(context, std::move(actors));
    EXPECT_EQ(result, concatenated("t_", {1, 4, 7, 10}));
    EXPECT_THROW_WITH((void)send_tables(tables, 1, keyed_tables("t_"), 0, 0), InvalidArgument, "step");
}

TEST(QueryActors, ApplyPerPartitionAppliesItsFunctionToEachRunOfEqualNumbersAndApplyToAllToEverything) {
    spillway::test::Watchdog const watchdog("apply_per_partition and apply_to_all");
    StreamMemory memory;
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    stream::Context context(pool, memory.resource);
    // Tables 0..5 arrive numbered 2, 2, 0, 5, 5, 5: three partitions, in
    // any order, as a shuffle sends them.
    std::vector<std::uint64_t> const numbers = {2, 2, 0, 5, 5, 5};
    stream::Channel tables(context), partitions(context);
    std::vector<table::Table> results;
    auto producer = [&]() -> stream::Actor {
        stream::CloseAtExit closer{&tables};
        for (std::size_t index = 0; index < numbers.size(); ++index) {
            std::optional<table::Table> table;
            {
                memory::ScopedHostResource const scope(&memory.resource);
                table = keyed_table(200, index, "t_");
            }
            stream::Message message = co_await stream::pack_table(context, numbers[index], *table);
            co_await tables.send(std::move(message));
        }
    };
    auto consumer = [&]() -> stream::Actor {
        stream::CloseAtExit closer{&partitions};
        while (auto message = co_await partitions.receive()) {
            memory::ScopedHostResource const scope(&memory.resource);
            results.push_back(stream::unpack_table(*message));
            EXPECT_EQ(message->sequence, results.size() == 1 ? 2U : (results.size() == 2 ? 0U : 5U));
        }
    };
    std::string const keys[] = {"t_key"};
    std::vector<Aggregate> const count = {{AggregateKind::count, "", "rows"}};
    std::vector<stream::Actor> actors;
    actors.push_back(producer());
    actors.push_back(apply_per_partition(tables, partitions, [&](table::Table const& partition) {
        return group_by(partition, {}, count);
    }));
    actors.push_back(consumer());
    stream::run_actors(context, std::move(actors));
    ASSERT_EQ(results.size(), 3U);
    EXPECT_EQ(rows_of(results[0]), (std::vector<Row>{{std::int64_t{400}}}));
    EXPECT_EQ(rows_of(results[1]), (std::vector<Row>{{std::int64_t{200}}}));
    EXPECT_EQ(rows_of(results[2]), (std::vector<Row>{{std::int64_t{600}}}));

    stream::Channel all_tables(context), all_sorted(context);
    SortKey const order[] = {{"t_amount", true}};
    table::Table whole;
    actors.clear();
    actors.push_back(send_tables(all_tables, 6, keyed_tables("t_")));
    actors.push_back(apply_to_all(all_tables, all_sorted, [&](table::Table const& all) { return sort(all, order); }));
    actors.push_back(collect_table(all_sorted, whole));
    stream::run_actors(context, std::move(actors));
    EXPECT_EQ(whole, sort(concatenated("t_", {0, 1, 2, 3, 4, 5}), order));
}

TEST(QueryActors, BroadcastJoinGivesWhatAHashJoinOfTheWholeSidesGives) {
    spillway::test::Watchdog const watchdog("broadcast_join");
    StreamMemory memory;
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    for (auto const kind : {JoinKind::inner, JoinKind::semi, JoinKind::anti}) {
        stream::Context context(pool, memory.resource);
        stream::Channel build(context), probe(context), joined(context);
        table::Table result;
        std::vector<stream::Actor> actors;
        actors.push_back(send_tables(build, 2, keyed_tables("b_")));
        actors.push_back(send_tables(probe, 5, keyed_tables("p_")));
        actors.push_back(broadcast_join(build, probe, joined, JoinSpec{{"b_key", "b_tag"}, {"p_key", "p_tag"}, kind}));
        actors.push_back(collect_table(joined, result));
        stream::run_actors(context, std::move(actors));
        std::string const build_keys[] = {"b_key", "b_tag"};
        std::string const probe_keys[] = {"p_key", "p_tag"};
        auto const expected = hash_join(concatenated("b_", {0, 1}), build_keys, concatenated("p_", {0, 1, 2, 3, 4}),
                                        probe_keys, kind);
        EXPECT_EQ(result, expected);
        EXPECT_GT(result.num_rows(), 0U);
    }
}

TEST(QueryActors, AJoinWithAnEmptyBuildSideSendsNothingUnlessItIsAnAntiJoin) {
    spillway::test::Watchdog const watchdog("broadcast_join with no build side");
    StreamMemory memory;
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    for (auto const kind : {JoinKind::inner, JoinKind::anti}) {
        stream::Context context(pool, memory.resource);
        stream::Channel build(context), probe(context), joined(context);
        table::Table result;
        std::vector<stream::Actor> actors;
        actors.push_back(send_tables(build, 0, keyed_tables("b_")));
        actors.push_back(send_tables(probe, 3, keyed_tables("p_")));
        actors.push_back(broadcast_join(build, probe, joined, JoinSpec{{"b_key"}, {"p_key"}, kind}));
        actors.push_back(collect_table(joined, result));
        stream::run_actors(context, std::move(actors));
        EXPECT_EQ(result, kind == JoinKind::anti ? concatenated("p_", {0, 1, 2}) : table::Table{});
    }
}

TEST(QueryActors, APartitionedJoinUnderALimitBelowItsBuildSideSpillsItByPartitionAndGivesTheWholeJoin) {
    spillway::test::Watchdog const watchdog("partitioned_join under a small limit");
    // About 1.3 MiB of build side against a limit of 1 MiB: the parked
    // partitions must spill, and each of 16 fits in memory when joined.
    StreamMemory memory(1024 * kibibyte);
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    auto const big_build = [](std::size_t index) {
        auto table = keyed_table(4000, index, "b_", 0.05);
        return table;
    };
    auto group = comm::LocalCommunicator::make_group(std::vector<memory::BufferResource*>{&memory.resource});
    stream::Context context(pool, memory.resource);
    shuffle::Shuffler build_shuffler(*group[0], 1, 16, memory.resource);
    shuffle::Shuffler probe_shuffler(*group[0], 2, 16, memory.resource);
    stream::Channel build(context, stream::ChannelLimits::unbounded()), probe(context), build_parts(context),
        probe_parts(context), joined(context);
    table::Table result;
    std::vector<stream::Actor> actors;
    actors.push_back(send_tables(build, 10, big_build));
    actors.push_back(send_tables(probe, 4, keyed_tables("p_")));
    actors.push_back(stream::shuffle_tables(build_shuffler, {1}, build, build_parts));
    actors.push_back(stream::shuffle_tables(probe_shuffler, {1}, probe, probe_parts));
    actors.push_back(partitioned_join(build_parts, probe_parts, joined, JoinSpec{{"b_tag"}, {"p_tag"}, JoinKind::semi}));
    actors.push_back(collect_table(joined, result));
    stream::run_actors(context, std::move(actors));

    std::vector<table::Table> builds;
    for (std::size_t index = 0; index < 10; ++index) {
        builds.push_back(big_build(index));
    }
    std::string const build_key[] = {"b_tag"};
    std::string const probe_key[] = {"p_tag"};
    auto const expected = hash_join(table::Table::concatenate(builds), build_key, concatenated("p_", {0, 1, 2, 3}),
                                    probe_key, JoinKind::semi);
    EXPECT_EQ(sorted_rows(result), sorted_rows(expected));
    EXPECT_GT(result.num_rows(), 600U);
    auto const spilled = memory.resource.statistics().get("stream.messages.spill.bytes");
    ASSERT_TRUE(spilled.has_value()) << "the parked build partitions never spilled";
    EXPECT_GT(spilled->total, 0.0);
}

TEST(QueryActors, APartitionedJoinWhoseProbePartitionComesBackFailsInsteadOfLosingItsRows) {
    spillway::test::Watchdog const watchdog("partitioned_join with a split probe partition");
    StreamMemory memory;
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    stream::Context context(pool, memory.resource);
    stream::Channel build(context), probe(context), joined(context);
    // Numbered as given, not by partition: probe partition 0 comes again after 1.
    auto numbered = [&](stream::Channel& output, std::vector<std::uint64_t> numbers, std::string prefix) -> stream::Actor {
        stream::CloseAtExit closer{&output};
        for (std::size_t index = 0; index < numbers.size(); ++index) {
            std::optional<table::Table> table;
            {
                memory::ScopedHostResource const scope(&memory.resource);
                table = keyed_table(20, index, prefix);
            }
            stream::Message message = co_await stream::pack_table(context, numbers[index], *table);
            co_await output.send(std::move(message));
        }
    };
    table::Table result;
    std::vector<stream::Actor> actors;
    actors.push_back(numbered(build, {0, 1}, "b_"));
    actors.push_back(numbered(probe, {0, 1, 0}, "p_"));
    actors.push_back(partitioned_join(build, probe, joined, JoinSpec{{"b_key"}, {"p_key"}}));
    actors.push_back(collect_table(joined, result));
    EXPECT_THROW_WITH(stream::run_actors(context, std::move(actors)), InvalidArgument,
                      "partition 0 came again after another");
}

TEST(QueryActors, AFunctionThatThrowsFailsThePipelineWithItsError) {
    spillway::test::Watchdog const watchdog("a failing apply_to_all");
    StreamMemory memory;
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    stream::Context context(pool, memory.resource);
    stream::Channel tables(context), out(context);
    table::Table result;
    std::vector<stream::Actor> actors;
    actors.push_back(send_tables(tables, 20, keyed_tables("t_")));
    actors.push_back(apply_to_all(tables, out, [](table::Table const&) -> table::Table {
        throw std::runtime_error("the final phase failed");
    }));
    actors.push_back(collect_table(out, result));
    EXPECT_THROW(
        {
            try {
                stream::run_actors(context, std::move(actors));
            } catch (std::runtime_error const& error) {
                EXPECT_STREQ(error.what(), "the final phase failed");
                throw;
            }
        },
        std::runtime_error);
    EXPECT_EQ(context.messages().size(), 0U);
}

TEST(QueryActors, TakeMessagesParkedInAnotherContextsStore) {
    // The tables come through a channel of one pipeline into the operators
    // of another, as the output of one query's stage feeds the next.
    spillway::test::Watchdog const watchdog("operators of one context reading the channel of another");
    StreamMemory memory;
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    stream::Context first(pool, memory.resource);
    stream::Context second(pool, memory.resource);
    stream::Channel tables(first), build(first), probe(first), all(second), joined(second);
    table::Table everything;
    table::Table join;
    std::vector<stream::Actor> actors;
    actors.push_back(send_tables(tables, 6, keyed_tables("t_")));
    actors.push_back(apply_to_all(tables, all, [](table::Table const& table) { return table; }));
    actors.push_back(collect_table(all, everything));
    actors.push_back(send_tables(build, 2, keyed_tables("b_")));
    actors.push_back(send_tables(probe, 3, keyed_tables("p_")));
    actors.push_back(
        broadcast_join(build, probe, joined, JoinSpec{{"b_key", "b_tag"}, {"p_key", "p_tag"}, JoinKind::inner})
    );
    actors.push_back(collect_table(joined, join));
    stream::run_actors(second, std::move(actors));
    EXPECT_EQ(everything, concatenated("t_", {0, 1, 2, 3, 4, 5}));
    std::string const build_keys[] = {"b_key", "b_tag"};
    std::string const probe_keys[] = {"p_key", "p_tag"};
    auto const expected = hash_join(concatenated("b_", {0, 1}), build_keys, concatenated("p_", {0, 1, 2}), probe_keys,
                                    JoinKind::inner);
    EXPECT_EQ(join, expected);
    EXPECT_GT(join.num_rows(), 0U);
    EXPECT_EQ(first.messages().size(), 0U);
    EXPECT_EQ(second.messages().size(), 0U);
}

TEST(QueryActors, CoalesceTablesJoinsConsecutiveSmallTablesUntilTheyReachTheSizeAndKeepsTheRows) {
    spillway::test::Watchdog const watchdog("coalesce_tables");
    StreamMemory memory;
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    stream::Context context(pool, memory.resource);
    stream::Channel tables(context), coalesced(context);
    std::vector<std::pair<std::uint64_t, std::size_t>> received;  // (number, rows) of each message
    std::vector<table::Table> tables_received;
    auto const small = [](std::size_t index) { return keyed_table(50, index, "t_"); };
    auto const one_bytes = small(0).byte_size();
    auto consumer = [&]() -> stream::Actor {
        stream::CloseAtExit closer{&coalesced};
        while (auto message = co_await coalesced.receive()) {
            memory::ScopedHostResource const scope(&memory.resource);
            tables_received.push_back(stream::unpack_table(*message));
            received.emplace_back(message->sequence, tables_received.back().num_rows());
        }
    };
    std::vector<stream::Actor> actors;
    actors.push_back(send_tables(tables, 10, small));
    // About three tables' bytes (a packed table is a little larger than its columns).
    actors.push_back(coalesce_tables(tables, coalesced, 3 * one_bytes));
    actors.push_back(consumer());
    stream::run_actors(context, std::move(actors));
    ASSERT_GE(received.size(), 3U);
    ASSERT_LE(received.size(), 4U);
    std::size_t rows = 0;
    std::uint64_t previous = 0;
    for (auto const& [number, count] : received) {
        EXPECT_GE(number, previous) << "numbered as the first table each holds";
        previous = number;
        rows += count;
    }
    EXPECT_EQ(received.front().first, 0U);
    EXPECT_EQ(rows, 500U);
    EXPECT_GT(received.front().second, 100U) << "the first message joins several tables";
    std::vector<table::Table> sent;
    for (std::size_t index = 0; index < 10; ++index) {
        sent.push_back(small(index));
    }
    EXPECT_EQ(table::Table::concatenate(tables_received), table::Table::concatenate(sent));
    EXPECT_THROW_WITH((void)coalesce_tables(tables, coalesced, 0), InvalidArgument, "at least 1 byte");
}
