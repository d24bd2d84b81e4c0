#include <spillway/tpch/queries.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <spillway/core/error.hpp>
#include <spillway/query/expressions.hpp>
#include <spillway/query/group_by.hpp>
#include <spillway/query/sort.hpp>
#include <spillway/table/date32.hpp>

#include "tpch/query_pipeline.hpp"

namespace spillway::tpch {
namespace {

using query::Aggregate;
using query::AggregateKind;
using query::ColumnExpression;
using query::SortKey;
using table::DataType;
using table::Table;
using table::TpchTable;

constexpr std::array<int, 8> queries{1, 3, 4, 5, 7, 9, 18, 21};

/// The values of column `name` of `table`, as `T`.
template <typename T>
std::span<T const> values(Table const& table, std::string_view name) {
    return table.column(name).values<T>();
}

/// The rows of `table` for which `keep(row)` holds.
template <typename Keep>
Table keep_rows(Table const& table, Keep&& keep) {
    return query::filter(table, query::make_mask(table.num_rows(), keep));
}

/// The columns `columns` of the rows of `table` for which `keep(row)` holds,
/// the others not copied.
template <typename Keep>
Table keep_rows(Table const& table, std::initializer_list<std::string> columns, Keep&& keep) {
    return query::filter(table, query::make_mask(table.num_rows(), keep),
                         std::span<std::string const>(columns.begin(), columns.size()));
}

/// A float64 column of `value(row)` for each row of `table`.
template <typename Value>
table::Column doubles(Table const& table, Value&& value) {
    return query::make_column(DataType::float64, table.num_rows(), value);
}

/// `price * (1 - discount)` of each line item: its revenue.
table::Column revenue(Table const& lineitem) {
    auto const price = values<double>(lineitem, "l_extendedprice");
    auto const discount = values<double>(lineitem, "l_discount");
    return doubles(lineitem, [&](std::size_t row) { return price[row] * (1 - discount[row]); });
}

/// The calendar year of each date of column `name`, as an int64 column.
std::function<table::Column(Table const&)> year_of(std::string name) {
    return [name = std::move(name)](Table const& t) {
        auto const dates = values<std::int32_t>(t, name);
        return query::make_column(DataType::int64, t.num_rows(), [&](std::size_t row) {
            return std::int64_t{table::to_civil(dates[row]).year};
        });
    };
}

/// The rows of string column `name` equal to one of `wanted`.
template <std::size_t N>
Table keep_strings(Table const& table, std::string_view name, std::array<std::string_view, N> const& wanted) {
    auto const& column = table.column(name);
    return keep_rows(table, [&](std::size_t row) {
        return std::find(wanted.begin(), wanted.end(), column.string(row)) != wanted.end();
    });
}

/// The columns `columns` of the rows of `orders` ordered on or after
/// `first` and before `next`.
Table ordered_between(Table const& orders, std::initializer_list<std::string> columns, std::int32_t first,
                      std::int32_t next) {
    auto const order_date = values<std::int32_t>(orders, "o_orderdate");
    return keep_rows(orders, columns,
                     [&](std::size_t row) { return order_date[row] >= first && order_date[row] < next; });
}

/// The nations named `names`, as (`n_nationkey`, `alias` holding the name).
template <std::size_t N>
detail::Flow& nations(detail::QueryPipeline& pipeline, std::array<std::string_view, N> names, std::string alias) {
    return pipeline.scan(
        TpchTable::nation, {"n_nationkey", "n_name"},
        [names, alias = std::move(alias)](Table const& nation) {
            ColumnExpression const columns[] = {query::column("n_nationkey"), query::column("n_name", alias)};
            return query::project(keep_strings(nation, "n_name", names), columns);
        }
    );
}

/// Q1, the pricing summary report: line items shipped by 1998-09-02,
/// summed and averaged by return flag and line status.
Table q1(detail::QueryPipeline& pipeline) {
    constexpr auto last_ship_date = table::to_date32({1998, 9, 2});
    static std::string const keys[] = {"l_returnflag", "l_linestatus"};
    static std::vector<Aggregate> const partial = {
        {AggregateKind::sum, "l_quantity", "sum_qty"},       {AggregateKind::sum, "l_extendedprice", "sum_base_price"},
        {AggregateKind::sum, "disc_price", "sum_disc_price"}, {AggregateKind::sum, "charge", "sum_charge"},
        {AggregateKind::sum, "l_discount", "sum_disc"},      {AggregateKind::count, "", "count_order"}};
    auto& partials = pipeline.scan(
        TpchTable::lineitem,
        {"l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_shipdate"},
        [](Table const& lineitem) {
            auto const ship = values<std::int32_t>(lineitem, "l_shipdate");
            auto const shipped = keep_rows(lineitem, [&](std::size_t row) { return ship[row] <= last_ship_date; });
            ColumnExpression const columns[] = {
                query::column("l_returnflag"),
                query::column("l_linestatus"),
                query::column("l_quantity"),
                query::column("l_extendedprice"),
                query::column("l_discount"),
                {"disc_price", revenue},
                {"charge",
                 [](Table const& t) {
                     auto const price = values<double>(t, "l_extendedprice");
                     auto const discount = values<double>(t, "l_discount");
                     auto const tax = values<double>(t, "l_tax");
                     return doubles(t, [&](std::size_t row) {
                         return price[row] * (1 - discount[row]) * (1 + tax[row]);
                     });
                 }},
            };
            return query::group_by(query::project(shipped, columns), keys, partial);
        }
    );
    auto& summed = pipeline.all(pipeline.gather(partials), [](Table const& all) {
        auto const totals = query::group_by(all, keys, query::merging_aggregates(partial));
        auto const count = values<std::int64_t>(totals, "count_order");
        auto const average = [&](std::string_view sum) {
            return [&totals, &count, sum](Table const&) {
                auto const summed_values = values<double>(totals, sum);
                return doubles(totals, [&](std::size_t row) {
                    return summed_values[row] / static_cast<double>(count[row]);
                });
            };
        };
        ColumnExpression const columns[] = {
            query::column("l_returnflag"), query::column("l_linestatus"), query::column("sum_qty"),
            query::column("sum_base_price"), query::column("sum_disc_price"), query::column("sum_charge"),
            {"avg_qty", average("sum_qty")}, {"avg_price", average("sum_base_price")},
            {"avg_disc", average("sum_disc")}, query::column("count_order"),
        };
        SortKey const order[] = {{"l_returnflag"}, {"l_linestatus"}};
        return query::sort(query::project(totals, columns), order);
    });
    return pipeline.run(summed, table::Schema({{"l_returnflag", DataType::string}, {"l_linestatus", DataType::string},
                                               {"sum_qty", DataType::float64}, {"sum_base_price", DataType::float64},
                                               {"sum_disc_price", DataType::float64}, {"sum_charge", DataType::float64},
                                               {"avg_qty", DataType::float64}, {"avg_price", DataType::float64},
                                               {"avg_disc", DataType::float64}, {"count_order", DataType::int64}}));
}

/// Q3, the shipping priority query: the ten unshipped orders of the
/// BUILDING segment with the most revenue on 1995-03-15.
Table q3(detail::QueryPipeline& pipeline) {
    constexpr auto date = table::to_date32({1995, 3, 15});
    auto& customers = pipeline.scan(TpchTable::customer, {"c_custkey", "c_mktsegment"}, [](Table const& customer) {
        auto const& segment = customer.column("c_mktsegment");
        return keep_rows(customer, {"c_custkey"}, [&](std::size_t row) { return segment.string(row) == "BUILDING"; });
    });
    auto& orders = pipeline.scan(
        TpchTable::orders, {"o_orderkey", "o_custkey", "o_orderdate", "o_shippriority"},
        [](Table const& order) {
            auto const order_date = values<std::int32_t>(order, "o_orderdate");
            return keep_rows(order, {"o_orderkey", "o_custkey", "o_orderdate", "o_shippriority"},
                             [&](std::size_t row) { return order_date[row] < date; });
        }
    );
    auto& lineitems = pipeline.scan(
        TpchTable::lineitem, {"l_orderkey", "l_extendedprice", "l_discount", "l_shipdate"},
        [](Table const& lineitem) {
            auto const ship = values<std::int32_t>(lineitem, "l_shipdate");
            ColumnExpression const columns[] = {query::column("l_orderkey"), {"revenue", revenue}};
            return query::project(keep_rows(lineitem, [&](std::size_t row) { return ship[row] > date; }), columns);
        }
    );
    auto& building_orders =
        pipeline.broadcast_join(customers, orders, {{"c_custkey"}, {"o_custkey"}, query::JoinKind::semi});
    auto& joined = pipeline.partitioned_join(building_orders, lineitems, {{"o_orderkey"}, {"l_orderkey"}});
    static std::string const keys[] = {"l_orderkey", "o_orderdate", "o_shippriority"};
    static std::vector<Aggregate> const sums = {{AggregateKind::sum, "revenue", "revenue"}};
    static SortKey const order[] = {{"revenue", true}, {"o_orderdate"}};
    auto const top_ten = [](Table const& rows) { return query::top_k(rows, order, 10); };
    // An order's line items are all in the partition of its key.
    auto& per_partition = pipeline.per_partition(joined, [top_ten](Table const& partition) {
        return top_ten(query::group_by(partition, keys, sums));
    });
    auto& top = pipeline.all(pipeline.gather(per_partition), [top_ten](Table const& all) {
        ColumnExpression const columns[] = {query::column("l_orderkey"), query::column("revenue"),
                                            query::column("o_orderdate"), query::column("o_shippriority")};
        return query::project(top_ten(all), columns);
    });
    return pipeline.run(top, table::Schema({{"l_orderkey", DataType::int64}, {"revenue", DataType::float64},
                                            {"o_orderdate", DataType::date32}, {"o_shippriority", DataType::int32}}));
}

/// Q4, the order priority checking query: the orders of 1993's third
/// quarter with at least one line received after its commit date, counted
/// by priority.
Table q4(detail::QueryPipeline& pipeline) {
    constexpr auto first = table::to_date32({1993, 7, 1});
    constexpr auto next = table::to_date32({1993, 10, 1});
    auto& orders = pipeline.scan(
        TpchTable::orders, {"o_orderkey", "o_orderdate", "o_orderpriority"},
        [](Table const& order) { return ordered_between(order, {"o_orderkey", "o_orderpriority"}, first, next); }
    );
    auto& late_lines = pipeline.scan(
        TpchTable::lineitem, {"l_orderkey", "l_commitdate", "l_receiptdate"},
        [](Table const& lineitem) {
            auto const commit = values<std::int32_t>(lineitem, "l_commitdate");
            auto const receipt = values<std::int32_t>(lineitem, "l_receiptdate");
            return keep_rows(lineitem, {"l_orderkey"}, [&](std::size_t row) { return commit[row] < receipt[row]; });
        }
    );
    // The quarter's orders are few: they are broadcast, and only the late
    // lines of those orders, with their priority, are shuffled by order, so
    // that each order counts once however many of its lines were late.
    auto& late_order_lines = pipeline.broadcast_join(orders, late_lines, {{"o_orderkey"}, {"l_orderkey"}});
    static std::string const order_keys[] = {"l_orderkey", "o_orderpriority"};
    static std::string const keys[] = {"o_orderpriority"};
    static std::vector<Aggregate> const counts = {{AggregateKind::count, "", "order_count"}};
    auto& partials = pipeline.per_partition(pipeline.shuffle(late_order_lines, {"l_orderkey"}), [](Table const& rows) {
        return query::group_by(query::group_by(rows, order_keys, {}), keys, counts);
    });
    auto& answer = pipeline.all(pipeline.gather(partials), [](Table const& all) {
        SortKey const order[] = {{"o_orderpriority"}};
        return query::sort(query::group_by(all, keys, query::merging_aggregates(counts)), order);
    });
    return pipeline.run(answer, table::Schema({{"o_orderpriority", DataType::string},
                                               {"order_count", DataType::int64}}));
}

/// Q5, the local supplier volume query: the revenue of 1994's orders in
/// ASIA from line items whose supplier is of the customer's nation, by
/// nation.
Table q5(detail::QueryPipeline& pipeline) {
    constexpr auto first = table::to_date32({1994, 1, 1});
    constexpr auto next = table::to_date32({1995, 1, 1});
    // Read twice: for the suppliers and for the customers.
    auto const asian_nations = [&pipeline]() -> detail::Flow& {
        auto& asia = pipeline.scan(TpchTable::region, {"r_regionkey", "r_name"}, [](Table const& region) {
            ColumnExpression const columns[] = {query::column("r_regionkey")};
            return query::project(keep_strings(region, "r_name", std::array<std::string_view, 1>{"ASIA"}), columns);
        });
        auto& all_nations =
            pipeline.scan(TpchTable::nation, {"n_nationkey", "n_name", "n_regionkey"}, [](Table const& nation) {
                ColumnExpression const columns[] = {query::column("n_nationkey"), query::column("n_name"),
                                                    query::column("n_regionkey")};
                return query::project(nation, columns);
            });
        auto& asian =
            pipeline.broadcast_join(asia, all_nations, {{"r_regionkey"}, {"n_regionkey"}, query::JoinKind::semi});
        return pipeline.all(asian, [](Table const& nations) {
            ColumnExpression const columns[] = {query::column("n_nationkey"), query::column("n_name")};
            return query::project(nations, columns);
        });
    };
    auto& supplier_keys = pipeline.scan(TpchTable::supplier, {"s_suppkey", "s_nationkey"}, [](Table const& supplier) {
        ColumnExpression const columns[] = {query::column("s_suppkey"), query::column("s_nationkey")};
        return query::project(supplier, columns);
    });
    auto& suppliers = pipeline.broadcast_join(asian_nations(), supplier_keys, {{"n_nationkey"}, {"s_nationkey"}});
    auto& customer_keys = pipeline.scan(TpchTable::customer, {"c_custkey", "c_nationkey"}, [](Table const& customer) {
        ColumnExpression const columns[] = {query::column("c_custkey"), query::column("c_nationkey")};
        return query::project(customer, columns);
    });
    auto& customers = pipeline.broadcast_join(asian_nations(), customer_keys,
                                              {{"n_nationkey"}, {"c_nationkey"}, query::JoinKind::semi});
    auto& order_keys = pipeline.scan(
        TpchTable::orders, {"o_orderkey", "o_custkey", "o_orderdate"},
        [](Table const& order) { return ordered_between(order, {"o_orderkey", "o_custkey"}, first, next); }
    );
    auto& orders = pipeline.broadcast_join(customers, order_keys, {{"c_custkey"}, {"o_custkey"}});
    auto& lineitems = pipeline.scan(
        TpchTable::lineitem, {"l_orderkey", "l_suppkey", "l_extendedprice", "l_discount"},
        [](Table const& lineitem) {
            ColumnExpression const columns[] = {query::column("l_orderkey"), query::column("l_suppkey"),
                                                {"revenue", revenue}};
            return query::project(lineitem, columns);
        }
    );
    auto& supplied = pipeline.broadcast_join(suppliers, lineitems, {{"s_suppkey"}, {"l_suppkey"}});
    // A year's orders of one region are few: they are broadcast too.
    // Joining on the nation as well keeps the lines whose supplier shares
    // the customer's nation.
    auto& local = pipeline.broadcast_join(orders, supplied,
                                          {{"o_orderkey", "c_nationkey"}, {"l_orderkey", "s_nationkey"}});
    static std::string const keys[] = {"n_name"};
    static std::vector<Aggregate> const sums = {{AggregateKind::sum, "revenue", "revenue"}};
    auto& partials =
        pipeline.per_partition(local, [](Table const& rows) { return query::group_by(rows, keys, sums); });
    auto& answer = pipeline.all(pipeline.gather(partials), [](Table const& all) {
        SortKey const order[] = {{"revenue", true}};
        return query::sort(query::group_by(all, keys, query::merging_aggregates(sums)), order);
    });
    return pipeline.run(answer, table::Schema({{"n_name", DataType::string}, {"revenue", DataType::float64}}));
}

/// Q7, the volume shipping query: revenue of the goods shipped in 1995 and
/// 1996 between suppliers and customers of FRANCE and GERMANY, by nations
/// and year.
Table q7(detail::QueryPipeline& pipeline) {
    constexpr std::array<std::string_view, 2> both{"FRANCE", "GERMANY"};
    constexpr auto first = table::to_date32({1995, 1, 1});
    constexpr auto last = table::to_date32({1996, 12, 31});
    auto& supplier_keys = pipeline.scan(TpchTable::supplier, {"s_suppkey", "s_nationkey"}, [](Table const& supplier) {
        ColumnExpression const columns[] = {query::column("s_suppkey"), query::column("s_nationkey")};
        return query::project(supplier, columns);
    });
    auto& suppliers = pipeline.broadcast_join(nations(pipeline, both, "supp_nation"), supplier_keys,
                                              {{"n_nationkey"}, {"s_nationkey"}});
    auto& customer_keys = pipeline.scan(TpchTable::customer, {"c_custkey", "c_nationkey"}, [](Table const& customer) {
        ColumnExpression const columns[] = {query::column("c_custkey"), query::column("c_nationkey")};
        return query::project(customer, columns);
    });
    auto& customers = pipeline.broadcast_join(nations(pipeline, both, "cust_nation"), customer_keys,
                                              {{"n_nationkey"}, {"c_nationkey"}});
    auto& order_keys = pipeline.scan(TpchTable::orders, {"o_orderkey", "o_custkey"}, [](Table const& order) {
        ColumnExpression const columns[] = {query::column("o_orderkey"), query::column("o_custkey")};
        return query::project(order, columns);
    });
    auto& orders = pipeline.broadcast_join(customers, order_keys, {{"c_custkey"}, {"o_custkey"}});
    auto& lineitems = pipeline.scan(
        TpchTable::lineitem, {"l_orderkey", "l_suppkey", "l_shipdate", "l_extendedprice", "l_discount"},
        [](Table const& lineitem) {
            auto const ship = values<std::int32_t>(lineitem, "l_shipdate");
            ColumnExpression const columns[] = {query::column("l_orderkey"), query::column("l_suppkey"),
                                                {"l_year", year_of("l_shipdate")}, {"volume", revenue}};
            return query::project(
                keep_rows(lineitem, [&](std::size_t row) { return ship[row] >= first && ship[row] <= last; }), columns
            );
        }
    );
    auto& supplied = pipeline.broadcast_join(suppliers, lineitems, {{"s_suppkey"}, {"l_suppkey"}});
    auto& shipped = pipeline.partitioned_join(orders, supplied, {{"o_orderkey"}, {"l_orderkey"}});
    static std::string const keys[] = {"supp_nation", "cust_nation", "l_year"};
    static std::vector<Aggregate> const sums = {{AggregateKind::sum, "volume", "revenue"}};
    // Joined partitions come in any order: partial sums per partition.
    auto& partials = pipeline.per_partition(shipped, [](Table const& rows) {
        auto const& supplier = rows.column("supp_nation");
        auto const& customer = rows.column("cust_nation");
        return query::group_by(
            keep_rows(rows, [&](std::size_t row) { return supplier.string(row) != customer.string(row); }), keys, sums
        );
    });
    auto& answer = pipeline.all(pipeline.gather(partials), [](Table const& all) {
        SortKey const order[] = {{"supp_nation"}, {"cust_nation"}, {"l_year"}};
        return query::sort(query::group_by(all, keys, query::merging_aggregates(sums)), order);
    });
    return pipeline.run(answer, table::Schema({{"supp_nation", DataType::string}, {"cust_nation", DataType::string},
                                               {"l_year", DataType::int64}, {"revenue", DataType::float64}}));
}

/// Q9, the product type profit measure: the profit on parts whose name
/// holds "green", by supplier nation and year.
Table q9(detail::QueryPipeline& pipeline) {
    // Read twice: once to filter the line items, once partsupp.
    auto const green_parts = [&pipeline]() -> detail::Flow& {
        return pipeline.scan(TpchTable::part, {"p_partkey", "p_name"}, [](Table const& part) {
            auto const& name = part.column("p_name");
            return keep_rows(part, {"p_partkey"},
                             [&](std::size_t row) { return name.string(row).find("green") != std::string_view::npos; });
        });
    };
    auto& lineitems = pipeline.scan(
        TpchTable::lineitem, {"l_orderkey", "l_partkey", "l_suppkey", "l_quantity", "l_extendedprice", "l_discount"},
        [](Table const& lineitem) {
            ColumnExpression const columns[] = {query::column("l_orderkey"), query::column("l_partkey"),
                                                query::column("l_suppkey"), query::column("l_quantity"),
                                                {"revenue", revenue}};
            return query::project(lineitem, columns);
        }
    );
    auto& green_lineitems =
        pipeline.broadcast_join(green_parts(), lineitems, {{"p_partkey"}, {"l_partkey"}, query::JoinKind::semi});
    auto& supplier_keys = pipeline.scan(TpchTable::supplier, {"s_suppkey", "s_nationkey"}, [](Table const& supplier) {
        ColumnExpression const columns[] = {query::column("s_suppkey"), query::column("s_nationkey")};
        return query::project(supplier, columns);
    });
    auto& all_nations = pipeline.scan(TpchTable::nation, {"n_nationkey", "n_name"}, [](Table const& nation) {
        ColumnExpression const columns[] = {query::column("n_nationkey"), query::column("n_name", "nation")};
        return query::project(nation, columns);
    });
    auto& suppliers = pipeline.broadcast_join(all_nations, supplier_keys, {{"n_nationkey"}, {"s_nationkey"}});
    auto& with_nation = pipeline.broadcast_join(suppliers, green_lineitems, {{"s_suppkey"}, {"l_suppkey"}});
    auto& all_partsupp = pipeline.scan(
        TpchTable::partsupp, {"ps_partkey", "ps_suppkey", "ps_supplycost"},
        [](Table const& rows) {
            ColumnExpression const columns[] = {query::column("ps_partkey"), query::column("ps_suppkey"),
                                                query::column("ps_supplycost")};
            return query::project(rows, columns);
        }
    );
    auto& partsupp =
        pipeline.broadcast_join(green_parts(), all_partsupp, {{"p_partkey"}, {"ps_partkey"}, query::JoinKind::semi});
    auto& with_cost = pipeline.partitioned_join(partsupp, with_nation,
                                                {{"ps_partkey", "ps_suppkey"}, {"l_partkey", "l_suppkey"}});
    auto& order_years = pipeline.scan(TpchTable::orders, {"o_orderkey", "o_orderdate"}, [](Table const& order) {
        ColumnExpression const columns[] = {query::column("o_orderkey"), {"o_year", year_of("o_orderdate")}};
        return query::project(order, columns);
    });
    // The green line items are far fewer than the orders: they are the build side.
    auto& dated = pipeline.partitioned_join(with_cost, order_years, {{"l_orderkey"}, {"o_orderkey"}});
    static std::string const keys[] = {"nation", "o_year"};
    static std::vector<Aggregate> const sums = {{AggregateKind::sum, "amount", "sum_profit"}};
    auto& partials = pipeline.per_partition(dated, [](Table const& rows) {
        auto const revenues = values<double>(rows, "revenue");
        auto const costs = values<double>(rows, "ps_supplycost");
        auto const quantities = values<double>(rows, "l_quantity");
        ColumnExpression const columns[] = {
            query::column("nation"), query::column("o_year"),
            {"amount", [&](Table const& t) {
                 return doubles(t, [&](std::size_t row) { return revenues[row] - costs[row] * quantities[row]; });
             }}};
        return query::group_by(query::project(rows, columns), keys, sums);
    });
    auto& answer = pipeline.all(pipeline.gather(partials), [](Table const& all) {
        SortKey const order[] = {{"nation"}, {"o_year", true}};
        return query::sort(query::group_by(all, keys, query::merging_aggregates(sums)), order);
    });
    return pipeline.run(answer, table::Schema({{"nation", DataType::string}, {"o_year", DataType::int64},
                                               {"sum_profit", DataType::float64}}));
}

/// Q18, the large volume customer query: the customers of the orders of
/// more than 300 units, with those orders, the 100 of highest total price.
Table q18(detail::QueryPipeline& pipeline) {
    auto& quantities = pipeline.scan(TpchTable::lineitem, {"l_orderkey", "l_quantity"}, [](Table const& lineitem) {
        ColumnExpression const columns[] = {query::column("l_orderkey"), query::column("l_quantity")};
        return query::project(lineitem, columns);
    });
    static std::string const order_key[] = {"l_orderkey"};
    static std::vector<Aggregate> const sums = {{AggregateKind::sum, "l_quantity", "sum(l_quantity)"}};
    // An order's line items are all in the partition of its key.
    auto& large = pipeline.per_partition(pipeline.shuffle(quantities, {"l_orderkey"}), [](Table const& partition) {
        auto const totals = query::group_by(partition, order_key, sums);
        auto const quantity = values<double>(totals, "sum(l_quantity)");
        return keep_rows(totals, [&](std::size_t row) { return quantity[row] > 300; });
    });
    auto& all_orders = pipeline.scan(
        TpchTable::orders, {"o_orderkey", "o_custkey", "o_orderdate", "o_totalprice"},
        [](Table const& order) {
            ColumnExpression const columns[] = {query::column("o_orderkey"), query::column("o_custkey"),
                                                query::column("o_orderdate"), query::column("o_totalprice")};
            return query::project(order, columns);
        }
    );
    // Few orders are that large: they are broadcast, and then so are their rows.
    auto& orders = pipeline.broadcast_join(large, all_orders, {{"l_orderkey"}, {"o_orderkey"}});
    auto& customer_names = pipeline.scan(TpchTable::customer, {"c_custkey", "c_name"}, [](Table const& customer) {
        ColumnExpression const columns[] = {query::column("c_custkey"), query::column("c_name")};
        return query::project(customer, columns);
    });
    auto& named = pipeline.broadcast_join(orders, customer_names, {{"o_custkey"}, {"c_custkey"}});
    auto& answer = pipeline.all(pipeline.gather(named), [](Table const& all) {
        SortKey const order[] = {{"o_totalprice", true}, {"o_orderdate"}};
        ColumnExpression const columns[] = {query::column("c_name"),       query::column("c_custkey"),
                                            query::column("o_orderkey"),   query::column("o_orderdate"),
                                            query::column("o_totalprice"), query::column("sum(l_quantity)")};
        return query::project(query::top_k(all, order, 100), columns);
    });
    return pipeline.run(answer, table::Schema({{"c_name", DataType::string}, {"c_custkey", DataType::int64},
                                               {"o_orderkey", DataType::int64}, {"o_orderdate", DataType::date32},
                                               {"o_totalprice", DataType::float64},
                                               {"sum(l_quantity)", DataType::float64}}));
}

/// The line items of `partition` (all the lines of its orders) that Q21
/// counts: late lines of an order with several suppliers, where no other
/// supplier was late.
Table late_alone(Table const& partition) {
    static std::string const order_supplier[] = {"l_orderkey", "l_suppkey"};
    static std::string const order[] = {"l_orderkey"};
    static std::vector<Aggregate> const was_late = {{AggregateKind::max, "late", "late"}};
    static std::vector<Aggregate> const per_order = {{AggregateKind::count, "", "suppliers"},
                                                     {AggregateKind::sum, "late", "late_suppliers"}};
    auto const orders = query::group_by(query::group_by(partition, order_supplier, was_late), order, per_order);
    auto const suppliers = values<std::int64_t>(orders, "suppliers");
    auto const late_suppliers = values<std::int64_t>(orders, "late_suppliers");
    auto const waiting = keep_rows(orders, [&](std::size_t row) {
        return suppliers[row] >= 2 && late_suppliers[row] == 1;
    });
    auto const late = values<std::int32_t>(partition, "late");
    auto const late_lines = keep_rows(partition, [&](std::size_t row) { return late[row] == 1; });
    return query::hash_join(waiting, order, late_lines, order, query::JoinKind::semi);
}

/// Q21, the suppliers who kept orders waiting: suppliers of SAUDI ARABIA
/// whose late line was the only late one of a finished order with several
/// suppliers, by number of such lines.
Table q21(detail::QueryPipeline& pipeline) {
    constexpr std::array<std::string_view, 1> saudi_arabia{"SAUDI ARABIA"};
    auto& supplier_names = pipeline.scan(
        TpchTable::supplier, {"s_suppkey", "s_name", "s_nationkey"},
        [](Table const& supplier) {
            ColumnExpression const columns[] = {query::column("s_suppkey"), query::column("s_name"),
                                                query::column("s_nationkey")};
            return query::project(supplier, columns);
        }
    );
    auto& suppliers = pipeline.broadcast_join(nations(pipeline, saudi_arabia, "n_name"), supplier_names,
                                              {{"n_nationkey"}, {"s_nationkey"}});
    auto& finished = pipeline.scan(TpchTable::orders, {"o_orderkey", "o_orderstatus"}, [](Table const& order) {
        auto const& status = order.column("o_orderstatus");
        return keep_rows(order, {"o_orderkey"}, [&](std::size_t row) { return status.string(row) == "F"; });
    });
    auto& lineitems = pipeline.scan(
        TpchTable::lineitem, {"l_orderkey", "l_suppkey", "l_receiptdate", "l_commitdate"},
        [](Table const& lineitem) {
            auto const receipt = values<std::int32_t>(lineitem, "l_receiptdate");
            auto const commit = values<std::int32_t>(lineitem, "l_commitdate");
            ColumnExpression const columns[] = {
                query::column("l_orderkey"), query::column("l_suppkey"),
                {"late", [&](Table const& t) {
                     return query::make_column(DataType::int32, t.num_rows(), [&](std::size_t row) {
                         return std::int32_t{receipt[row] > commit[row] ? 1 : 0};
                     });
                 }}};
            return query::project(lineitem, columns);
        }
    );
    // Every line of an order lands in its order's partition, so each
    // partition sees whole orders.
    auto& finished_lines =
        pipeline.partitioned_join(finished, lineitems, {{"o_orderkey"}, {"l_orderkey"}, query::JoinKind::semi});
    auto& waiting = pipeline.per_partition(finished_lines, late_alone);
    auto& named = pipeline.broadcast_join(suppliers, waiting, {{"s_suppkey"}, {"l_suppkey"}});
    static std::string const keys[] = {"s_name"};
    static std::vector<Aggregate> const counts = {{AggregateKind::count, "", "numwait"}};
    auto& partials =
        pipeline.per_partition(named, [](Table const& rows) { return query::group_by(rows, keys, counts); });
    auto& answer = pipeline.all(pipeline.gather(partials), [](Table const& all) {
        SortKey const order[] = {{"numwait", true}, {"s_name"}};
        return query::top_k(query::group_by(all, keys, query::merging_aggregates(counts)), order, 100);
    });
    return pipeline.run(answer, table::Schema({{"s_name", DataType::string}, {"numwait", DataType::int64}}));
}

}  // namespace

TableSource generated_tables(table::TpchGenerator const& generator) {
    return {.num_chunks = [&generator](TpchTable table) { return generator.num_chunks(table); },
            .chunk = [&generator](TpchTable table, std::size_t chunk, std::span<std::string const>) {
                return generator.table(table, chunk);
            }};
}

std::span<int const> implemented_queries() noexcept { return queries; }

std::string implemented_queries_text() {
    std::string list;
    for (auto const implemented : queries) {
        list += (list.empty() ? "" : ", ") + std::to_string(implemented);
    }
    return list;
}

void check_implemented(int number) {
    if (std::find(queries.begin(), queries.end(), number) != queries.end()) {
        return;
    }
    SPILLWAY_FAIL("TPC-H query " << number << " is not implemented; the queries are " << implemented_queries_text(),
                  InvalidArgument);
}

Table run_query(int number, comm::Communicator& communicator, exec::Executor& executor, TableSource const& source,
                QueryConfig const& config, shuffle::OpId first_op_id) {
    check_implemented(number);
    SPILLWAY_EXPECTS(config.workers > 0, "a query needs at least one worker (QueryConfig::workers)", InvalidArgument);
    detail::QueryPipeline pipeline(communicator, executor, source, config, first_op_id);
    switch (number) {
        case 1: return q1(pipeline);
        case 3: return q3(pipeline);
        case 4: return q4(pipeline);
        case 5: return q5(pipeline);
        case 7: return q7(pipeline);
        case 9: return q9(pipeline);
        case 18: return q18(pipeline);
        case 21: return q21(pipeline);
        default: break;
    }
    SPILLWAY_FAIL("TPC-H query " << number << " is not implemented", InvalidArgument);
}

}  // namespace spillway::tpch
