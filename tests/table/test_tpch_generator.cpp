#include <spillway/table/tpch_generator.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include <spillway/table/date32.hpp>
#include <spillway/table/table_checksum.hpp>

#include <common/error_matchers.hpp>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::table;

namespace {

Table all_chunks(TpchGenerator const& generator, bool lineitem) {
    std::vector<Table> chunks;
    for (std::size_t chunk = 0; chunk < generator.num_chunks(); ++chunk) {
        chunks.push_back(lineitem ? generator.lineitem(chunk) : generator.orders(chunk));
    }
    return Table::concatenate(chunks);
}

}  // namespace

TEST(TpchGenerator, SizesFollowTheScaleFactor) {
    TpchGenerator const generator(0.01, 1, 1000);
    EXPECT_EQ(generator.num_orders(), 15'000u);
    EXPECT_EQ(generator.num_chunks(), 15u);
    auto const orders = all_chunks(generator, false);
    auto const lineitem = all_chunks(generator, true);
    EXPECT_EQ(orders.schema(), TpchGenerator::orders_schema());
    EXPECT_EQ(lineitem.schema(), TpchGenerator::lineitem_schema());
    EXPECT_EQ(orders.num_rows(), 15'000u);
    // One to seven line items per order, four on average.
    EXPECT_NEAR(static_cast<double>(lineitem.num_rows()) / 15'000, 4.0, 0.1);
    EXPECT_EQ(TpchGenerator(0.0000001).num_orders(), 1u);
}

TEST(TpchGenerator, OutputDoesNotDependOnTheChunkSize) {
    TpchGenerator const small_chunks(0.002, 7, 100);
    TpchGenerator const odd_chunks(0.002, 7, 333);
    EXPECT_EQ(all_chunks(small_chunks, true), all_chunks(odd_chunks, true));
    EXPECT_EQ(all_chunks(small_chunks, false), all_chunks(odd_chunks, false));
}

TEST(TpchGenerator, RanksOnThreadsTakingInterleavedChunksGenerateTheSameRows) {
    TpchGenerator const generator(0.003, 11, 256);
    auto const expected = all_chunks(generator, true);
    for (std::size_t const ranks : {2, 3, 5}) {
        std::vector<Table> chunks(generator.num_chunks());
        std::vector<std::thread> threads;
        for (std::size_t rank = 0; rank < ranks; ++rank) {
            threads.emplace_back([&, rank] {
                for (auto chunk = rank; chunk < generator.num_chunks(); chunk += ranks) {
                    chunks[chunk] = generator.lineitem(chunk);
                }
            });
        }
        for (auto& thread : threads) {
            thread.join();
        }
        EXPECT_EQ(Table::concatenate(chunks), expected) << ranks << " ranks";
    }
}

TEST(TpchGenerator, DifferentSeedsGiveDifferentData) {
    EXPECT_NE(TableChecksum::of(TpchGenerator(0.001, 1).lineitem(0)),
              TableChecksum::of(TpchGenerator(0.001, 2).lineitem(0)));
}

TEST(TpchGenerator, ValuesFollowTheSpecification) {
    TpchGenerator const generator(0.005, 3, 2000);
    auto const orders = all_chunks(generator, false);
    auto const lineitem = all_chunks(generator, true);
    auto const start = to_date32({1992, 1, 1});
    auto const last_order = to_date32({1998, 8, 2});
    auto const current = to_date32({1995, 6, 17});

    struct OrderFacts {
        std::int32_t date;
        std::string status;
        double total;
    };
    std::map<std::int64_t, OrderFacts> by_key;
    auto const order_keys = orders.column("o_orderkey").values<std::int64_t>();
    for (std::size_t row = 0; row < orders.num_rows(); ++row) {
        auto const key = order_keys[row];
        ASSERT_GE(key % 32, 1);
        ASSERT_LE(key % 32, 8);
        ASSERT_NE(orders.column("o_custkey").values<std::int64_t>()[row] % 3, 0);
        auto const date = orders.column("o_orderdate").values<std::int32_t>()[row];
        ASSERT_GE(date, start);
        ASSERT_LE(date, last_order);
        auto const comment = orders.column("o_comment").string(row);
        ASSERT_GE(comment.size(), 19u);
        ASSERT_LE(comment.size(), 78u);
        ASSERT_EQ(orders.column("o_clerk").string(row).substr(0, 6), "Clerk#");
        by_key[key] = {date, std::string(orders.column("o_orderstatus").string(row)),
                       orders.column("o_totalprice").values<double>()[row]};
    }
    ASSERT_EQ(by_key.size(), orders.num_rows());

    std::map<std::int64_t, std::string> statuses;
    std::map<std::int64_t, double> totals;
    std::int32_t expected_line = 1;
    for (std::size_t row = 0; row < lineitem.num_rows(); ++row) {
        auto const key = lineitem.column("l_orderkey").values<std::int64_t>()[row];
        ASSERT_TRUE(by_key.contains(key));
        auto const line = lineitem.column("l_linenumber").values<std::int32_t>()[row];
        expected_line = line == 1 ? 1 : expected_line + 1;
        ASSERT_EQ(line, expected_line);
        ASSERT_LE(line, 7);
        auto const order_date = by_key[key].date;
        auto const ship = lineitem.column("l_shipdate").values<std::int32_t>()[row];
        auto const commit = lineitem.column("l_commitdate").values<std::int32_t>()[row];
        auto const receipt = lineitem.column("l_receiptdate").values<std::int32_t>()[row];
        ASSERT_GE(ship - order_date, 1);
        ASSERT_LE(ship - order_date, 121);
        ASSERT_GE(commit - order_date, 30);
        ASSERT_LE(commit - order_date, 90);
        ASSERT_GE(receipt - ship, 1);
        ASSERT_LE(receipt - ship, 30);
        auto const flag = lineitem.column("l_returnflag").string(row);
        ASSERT_TRUE(receipt <= current ? (flag == "R" || flag == "A") : flag == "N");
        auto const status = lineitem.column("l_linestatus").string(row);
        ASSERT_EQ(status, ship > current ? "O" : "F");
        statuses[key] += status;

        auto const part = lineitem.column("l_partkey").values<std::int64_t>()[row];
        auto const quantity = lineitem.column("l_quantity").values<double>()[row];
        auto const retail = static_cast<double>(90000 + (part / 10) % 20001 + 100 * (part % 1000)) / 100;
        auto const extended = lineitem.column("l_extendedprice").values<double>()[row];
        ASSERT_NEAR(extended, quantity * retail, 0.005);
        ASSERT_GE(quantity, 1);
        ASSERT_LE(quantity, 50);
        auto const discount = lineitem.column("l_discount").values<double>()[row];
        auto const tax = lineitem.column("l_tax").values<double>()[row];
        ASSERT_GE(discount, 0);
        ASSERT_LE(discount, 0.10 + 1e-9);
        ASSERT_GE(tax, 0);
        ASSERT_LE(tax, 0.08 + 1e-9);
        totals[key] += extended * (1 + tax) * (1 - discount);
        auto const comment = lineitem.column("l_comment").string(row);
        ASSERT_GE(comment.size(), 10u);
        ASSERT_LE(comment.size(), 43u);
    }
    for (auto const& [key, facts] : by_key) {
        auto const& lines = statuses[key];
        auto const expected = lines.find('O') == std::string::npos ? "F"
                            : lines.find('F') == std::string::npos ? "O"
                                                                   : "P";
        ASSERT_EQ(facts.status, expected) << key;
        ASSERT_NEAR(facts.total, totals[key], 0.01 * static_cast<double>(lines.size()));
    }
}

TEST(TpchGenerator, RejectsBadArguments) {
    EXPECT_THROW_WITH(TpchGenerator(0), InvalidArgument, "scale factor 0 is out of range");
    EXPECT_THROW_WITH(TpchGenerator(-1), InvalidArgument, "out of range");
    EXPECT_THROW_WITH(TpchGenerator(1e9), InvalidArgument, "out of range");
    EXPECT_THROW_WITH(TpchGenerator(1, 0, 0), InvalidArgument, "it holds 1 to 2097152");
    EXPECT_THROW_WITH(TpchGenerator(1, 0, TpchGenerator::max_orders_per_chunk + 1), InvalidArgument,
                      "it holds 1 to 2097152");
    EXPECT_THROW_WITH(TpchGenerator(1, 0, SIZE_MAX), InvalidArgument, "it holds 1 to 2097152");
    EXPECT_EQ(TpchGenerator(0.001, 0, TpchGenerator::max_orders_per_chunk).lineitem(0).num_rows(),
              TpchGenerator(0.001).lineitem(0).num_rows())
        << "one chunk of all 1500 orders, whatever room a chunk has";
    EXPECT_THROW_WITH(static_cast<void>(TpchGenerator(0.001).lineitem(1)), InvalidArgument,
                      "TPC-H chunk 1 of a generator with 1 chunks");
}

namespace {

Table whole(TpchGenerator const& generator, TpchTable table) {
    std::vector<Table> chunks;
    for (std::size_t chunk = 0; chunk < generator.num_chunks(table); ++chunk) {
        chunks.push_back(generator.table(table, chunk));
    }
    return Table::concatenate(chunks);
}

/// The fraction of the rows of `column` for which `holds` is true.
template <typename Predicate>
double fraction(Column const& column, Predicate holds) {
    std::size_t count = 0;
    for (std::size_t row = 0; row < column.size(); ++row) {
        count += holds(column.string(row)) ? 1 : 0;
    }
    return static_cast<double>(count) / static_cast<double>(column.size());
}

}  // namespace

TEST(TpchGenerator, EveryTableHasTheSpecificationsColumnsAndScaledRowCounts) {
    TpchGenerator const generator(0.01, 3, 700);
    std::map<TpchTable, std::size_t> const rows = {
        {TpchTable::part, 2'000},    {TpchTable::supplier, 100}, {TpchTable::partsupp, 8'000},
        {TpchTable::customer, 1'500}, {TpchTable::orders, 15'000}, {TpchTable::nation, 25},
        {TpchTable::region, 5}};
    for (auto const& [table, count] : rows) {
        auto const generated = whole(generator, table);
        EXPECT_EQ(generated.num_rows(), count) << to_string(table);
        EXPECT_EQ(generated.schema(), TpchGenerator::schema(table)) << to_string(table);
        EXPECT_EQ(parse_tpch_table(to_string(table)), table);
    }
    EXPECT_EQ(TpchGenerator::schema(TpchTable::part).to_string(),
              "p_partkey:int64, p_name:string, p_mfgr:string, p_brand:string, p_type:string, p_size:int32, "
              "p_container:string, p_retailprice:float64, p_comment:string");
    EXPECT_EQ(generator.num_chunks(TpchTable::part), 3U);
    EXPECT_EQ(generator.num_chunks(TpchTable::lineitem), generator.num_chunks());
    EXPECT_EQ(whole(generator, TpchTable::lineitem), all_chunks(generator, true));
    EXPECT_THROW_WITH((void)parse_tpch_table("parts"), InvalidArgument, "the tables are part, supplier");
    EXPECT_THROW_WITH((void)generator.table(TpchTable::nation, 1), InvalidArgument, "nation");
}

TEST(TpchGenerator, TheQueriesPredicatesSelectWhatTheSpecificationIntends) {
    TpchGenerator const generator(0.1, 0);
    // p_name LIKE '%green%' (Q9): five of 92 colours, about 5.4% of parts.
    auto const part = whole(generator, TpchTable::part);
    EXPECT_NEAR(fraction(part.column("p_name"), [](std::string_view name) {
                    return name.find("green") != std::string_view::npos;
                }),
                5.0 / 92, 0.005);
    // c_mktsegment = 'BUILDING' (Q3): one of five segments.
    auto const customer = whole(generator, TpchTable::customer);
    EXPECT_NEAR(fraction(customer.column("c_mktsegment"), [](std::string_view s) { return s == "BUILDING"; }), 0.2,
                0.01);
    // Suppliers of one nation (Q21's SAUDI ARABIA, Q7's FRANCE): 1 in 25.
    auto const supplier = whole(generator, TpchTable::supplier);
    auto const nations = supplier.column("s_nationkey").values<std::int64_t>();
    EXPECT_NEAR(static_cast<double>(std::count(nations.begin(), nations.end(), 20)) / 1000, 0.04, 0.02);
    auto const nation = whole(generator, TpchTable::nation);
    EXPECT_EQ(nation.column("n_name").string(20), "SAUDI ARABIA");
    EXPECT_EQ(nation.column("n_regionkey").values<std::int64_t>()[6], 3);  // FRANCE is in EUROPE
    EXPECT_EQ(whole(generator, TpchTable::region).column("r_name").string(3), "EUROPE");
}

TEST(TpchGenerator, EveryLineItemsPartAndSupplierIsARowOfPartsuppAndPricesFollowThePart) {
    // Below scale 0.025 the specification's formula gives some parts one
    // supplier twice (at 0.003 and 0.0123, say); the generator does not.
    for (double const scale : {0.001, 0.003, 0.0123, 0.01}) {
        TpchGenerator const generator(scale, 9, 500);
        auto const partsupp = whole(generator, TpchTable::partsupp);
        std::set<std::pair<std::int64_t, std::int64_t>> pairs;
        for (std::size_t row = 0; row < partsupp.num_rows(); ++row) {
            pairs.emplace(partsupp.column(0).values<std::int64_t>()[row],
                          partsupp.column(1).values<std::int64_t>()[row]);
        }
        EXPECT_EQ(pairs.size(), partsupp.num_rows()) << "four distinct suppliers per part at scale " << scale;
        auto const part = whole(generator, TpchTable::part);
        auto const prices = part.column("p_retailprice").values<double>();
        auto const lineitem = whole(generator, TpchTable::lineitem);
        auto const parts = lineitem.column("l_partkey").values<std::int64_t>();
        auto const suppliers = lineitem.column("l_suppkey").values<std::int64_t>();
        auto const quantities = lineitem.column("l_quantity").values<double>();
        auto const extended = lineitem.column("l_extendedprice").values<double>();
        for (std::size_t row = 0; row < lineitem.num_rows(); ++row) {
            ASSERT_TRUE(pairs.contains({parts[row], suppliers[row]})) << "line item " << row << ", scale " << scale;
            ASSERT_NEAR(extended[row], quantities[row] * prices[static_cast<std::size_t>(parts[row] - 1)], 1e-6);
        }
    }
    TpchGenerator const generator(0.01, 9, 500);
    auto const customers = whole(generator, TpchTable::customer).num_rows();
    auto const orders = whole(generator, TpchTable::orders);
    for (auto const key : orders.column("o_custkey").values<std::int64_t>()) {
        ASSERT_TRUE(key >= 1 && key <= static_cast<std::int64_t>(customers) && key % 3 != 0);
    }
}
