// The TPC-H queries on one rank and on several, with and without spilling,
// against each other and against sums taken straight from the generator.
// (bench/tpch/tpch_duckdb.py checks the answers against DuckDB's.)
#include <spillway/tpch/queries.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <common/error_matchers.hpp>
#include <common/watchdog.hpp>
#include <spillway/comm/local_communicator.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/table/date32.hpp>
#include <stream/stream_test_support.hpp>

#include <gtest/gtest.h>

using namespace spillway;

namespace {

/// The answer of query `number` on each of `ranks` ranks (threads), each
/// under `host_limit`, over `generator`'s tables; and the bytes they spilled.
struct Run {
    std::vector<table::Table> answers;
    double spilled = 0;
};

/// With `force_disk`, every spillable buffer goes through the disk tier.
Run run_on_ranks(int number, table::TpchGenerator const& generator, comm::Rank ranks, std::size_t host_limit,
                 bool force_disk = false) {
    std::vector<std::unique_ptr<test::TemporaryDirectory>> roots;
    std::vector<std::unique_ptr<memory::BufferResource>> owned;
    std::vector<memory::BufferResource*> resources;
    for (comm::Rank rank = 0; rank < ranks; ++rank) {
        roots.push_back(std::make_unique<test::TemporaryDirectory>());
        auto config = test::test_config(*roots.back(), host_limit);
        config.force_disk = force_disk;
        owned.push_back(std::make_unique<memory::BufferResource>(config));
        resources.push_back(owned.back().get());
    }
    auto group = comm::LocalCommunicator::make_group(resources);
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    auto const source = tpch::generated_tables(generator);
    tpch::QueryConfig const config{.workers = 2, .partitions = 8, .shuffle = {}};
    std::vector<table::Table> answers(static_cast<std::size_t>(ranks));
    std::vector<std::string> errors(static_cast<std::size_t>(ranks));
    std::vector<std::thread> threads;
    for (comm::Rank rank = 0; rank < ranks; ++rank) {
        threads.emplace_back([&, rank] {
            auto const index = static_cast<std::size_t>(rank);
            try {
                auto answer = tpch::run_query(number, *group[index], pool, source, config);
                memory::ScopedHostResource const heap(nullptr);
                answers[index] = table::Table(answer);  // a copy on the heap, to outlive the resources
            } catch (std::exception const& error) {
                errors[index] = error.what();
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    for (auto const& error : errors) {
        EXPECT_EQ(error, "") << "query " << number << " failed on a rank";
    }
    Run run{.answers = std::move(answers)};
    for (auto const* resource : resources) {
        run.spilled += resource->statistics().get("memory.copy.host_to_disk.bytes").value_or(Statistics::Entry{}).total;
    }
    return run;
}

/// Expects equal answers: the same columns and rows, doubles within a
/// relative 1e-9 (ranks sum in different orders).
void expect_same_answer(table::Table const& actual, table::Table const& expected) {
    ASSERT_EQ(actual.schema(), expected.schema());
    ASSERT_EQ(actual.num_rows(), expected.num_rows());
    for (std::size_t c = 0; c < actual.num_columns(); ++c) {
        auto const& a = actual.column(c);
        auto const& e = expected.column(c);
        if (a.type() != table::DataType::float64) {
            EXPECT_EQ(a, e) << actual.schema().field(c).name;
            continue;
        }
        for (std::size_t row = 0; row < a.size(); ++row) {
            auto const x = a.values<double>()[row];
            auto const y = e.values<double>()[row];
            EXPECT_NEAR(x, y, 1e-9 * std::abs(y)) << actual.schema().field(c).name << " row " << row;
        }
    }
}

}  // namespace

TEST(TpchQueries, Q1CountsAndSumsTheLineItemsShippedByItsDate) {
    test::Watchdog const watchdog("TPC-H Q1");
    table::TpchGenerator const generator(0.01, 3, 500);
    auto const answer = run_on_ranks(1, generator, 1, 64 * test::mebibyte).answers.front();
    EXPECT_EQ(answer.schema().to_string(),
              "l_returnflag:string, l_linestatus:string, sum_qty:float64, sum_base_price:float64, "
              "sum_disc_price:float64, sum_charge:float64, avg_qty:float64, avg_price:float64, avg_disc:float64, "
              "count_order:int64");
    // The groups of the specification's answer, in its order.
    ASSERT_EQ(answer.num_rows(), 4U);
    std::vector<std::string> groups;
    for (std::size_t row = 0; row < 4; ++row) {
        groups.push_back(std::string(answer.column(0).string(row)) + std::string(answer.column(1).string(row)));
    }
    EXPECT_EQ(groups, (std::vector<std::string>{"AF", "NF", "NO", "RF"}));
    // Counted and summed straight from the generated rows.
    std::int64_t shipped = 0;
    double quantity = 0;
    for (std::size_t chunk = 0; chunk < generator.num_chunks(); ++chunk) {
        auto const lineitem = generator.lineitem(chunk);
        auto const ship = lineitem.column("l_shipdate").values<std::int32_t>();
        auto const quantities = lineitem.column("l_quantity").values<double>();
        for (std::size_t row = 0; row < lineitem.num_rows(); ++row) {
            if (ship[row] <= table::to_date32({1998, 9, 2})) {
                ++shipped;
                quantity += quantities[row];
            }
        }
    }
    auto const counts = answer.column("count_order").values<std::int64_t>();
    auto const sums = answer.column("sum_qty").values<double>();
    EXPECT_EQ(counts[0] + counts[1] + counts[2] + counts[3], shipped);
    EXPECT_NEAR(sums[0] + sums[1] + sums[2] + sums[3], quantity, 1e-6);
    EXPECT_NEAR(answer.column("avg_qty").values<double>()[0], sums[0] / static_cast<double>(counts[0]), 1e-9);
}

/// Each implemented query, as a test of its own.
class EveryQuery : public testing::TestWithParam<int> {};

INSTANTIATE_TEST_SUITE_P(TpchQueries, EveryQuery, testing::ValuesIn(tpch::implemented_queries().begin(),
                                                                     tpch::implemented_queries().end()),
                         [](testing::TestParamInfo<int> const& query) { return "q" + std::to_string(query.param); });

TEST_P(EveryQuery, EveryRankGetsTheAnswerOfOneRankAndSpillingChangesNothing) {
    test::Watchdog const watchdog("TPC-H query on 3 ranks");
    table::TpchGenerator const generator(0.05, 1, 300);
    int const number = GetParam();
    auto const one = run_on_ranks(number, generator, 1, 256 * test::mebibyte);
    auto const three = run_on_ranks(number, generator, 3, 256 * test::mebibyte);
    ASSERT_GT(one.answers.front().num_rows(), 0U) << "query " << number;
    for (auto const& answer : three.answers) {
        expect_same_answer(answer, one.answers.front());
    }
    // 1.5 MiB per rank, below what Q3 shuffles to each.
    auto const tight = run_on_ranks(number, generator, 3, 1536 * test::kibibyte);
    for (auto const& answer : tight.answers) {
        expect_same_answer(answer, one.answers.front());
    }
    // Every message, shuffled chunk and gathered chunk through the disk.
    auto const spilled = run_on_ranks(number, generator, 3, 256 * test::mebibyte, true);
    for (auto const& answer : spilled.answers) {
        expect_same_answer(answer, one.answers.front());
    }
    EXPECT_GT(spilled.spilled, 0.0) << "query " << number;
    // So few rows that most queries find none: the answer keeps its columns.
    table::TpchGenerator const tiny(0.00001, 1, 300);
    for (auto const& answer : run_on_ranks(number, tiny, 2, 16 * test::mebibyte).answers) {
        EXPECT_EQ(answer.schema(), one.answers.front().schema()) << "query " << number;
    }
}

TEST(TpchQueries, Q3GivesItsTenOrdersOfMostRevenueInOrder) {
    test::Watchdog const watchdog("TPC-H Q3");
    table::TpchGenerator const generator(0.01, 5, 500);
    auto const answer = run_on_ranks(3, generator, 2, 64 * test::mebibyte).answers.front();
    EXPECT_EQ(answer.schema().to_string(),
              "l_orderkey:int64, revenue:float64, o_orderdate:date32, o_shippriority:int32");
    ASSERT_EQ(answer.num_rows(), 10U);
    auto const revenue = answer.column("revenue").values<double>();
    for (std::size_t row = 1; row < 10; ++row) {
        EXPECT_GE(revenue[row - 1], revenue[row]);
    }
    for (auto const date : answer.column("o_orderdate").values<std::int32_t>()) {
        EXPECT_LT(date, table::to_date32({1995, 3, 15}));
    }
}

TEST(TpchQueries, Q18GivesTheOrdersOfMoreThan300UnitsByTotalPrice) {
    test::Watchdog const watchdog("TPC-H Q18");
    table::TpchGenerator const generator(0.05, 7, 500);
    auto const answer = run_on_ranks(18, generator, 2, 64 * test::mebibyte).answers.front();
    EXPECT_EQ(answer.schema().to_string(),
              "c_name:string, c_custkey:int64, o_orderkey:int64, o_orderdate:date32, o_totalprice:float64, "
              "sum(l_quantity):float64");
    // Summed straight from the generated line items: each order's quantity.
    std::map<std::int64_t, double> large;
    for (std::size_t chunk = 0; chunk < generator.num_chunks(); ++chunk) {
        auto const lineitem = generator.lineitem(chunk);
        auto const keys = lineitem.column("l_orderkey").values<std::int64_t>();
        auto const quantities = lineitem.column("l_quantity").values<double>();
        std::map<std::int64_t, double> sums;
        for (std::size_t row = 0; row < lineitem.num_rows(); ++row) {
            sums[keys[row]] += quantities[row];
        }
        for (auto const& [key, sum] : sums) {
            if (sum > 300) {
                large[key] = sum;  // a chunk holds whole orders
            }
        }
    }
    ASSERT_GT(large.size(), 0U);
    ASSERT_EQ(answer.num_rows(), std::min<std::size_t>(large.size(), 100));
    auto const orders = answer.column("o_orderkey").values<std::int64_t>();
    auto const sums = answer.column("sum(l_quantity)").values<double>();
    auto const prices = answer.column("o_totalprice").values<double>();
    for (std::size_t row = 0; row < answer.num_rows(); ++row) {
        ASSERT_TRUE(large.contains(orders[row])) << "order " << orders[row];
        EXPECT_NEAR(sums[row], large.at(orders[row]), 1e-9);
        if (row > 0) {
            EXPECT_GE(prices[row - 1], prices[row]);
        }
    }
}

TEST(TpchQueries, AQueryThatIsNotImplementedIsRejected) {
    test::StreamMemory memory;
    auto group = comm::LocalCommunicator::make_group(std::vector<memory::BufferResource*>{&memory.resource});
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 1});
    table::TpchGenerator const generator(0.001);
    EXPECT_THROW_WITH((void)tpch::run_query(2, *group[0], pool, tpch::generated_tables(generator), {}),
                      InvalidArgument, "query 2 is not implemented");
}

TEST(TpchQueries, AConfigWithoutWorkersIsRejected) {
    test::StreamMemory memory;
    auto group = comm::LocalCommunicator::make_group(std::vector<memory::BufferResource*>{&memory.resource});
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 1});
    table::TpchGenerator const generator(0.001);
    tpch::QueryConfig config;
    config.workers = 0;
    EXPECT_THROW_WITH((void)tpch::run_query(1, *group[0], pool, tpch::generated_tables(generator), config),
                      InvalidArgument, "at least one worker");
}
