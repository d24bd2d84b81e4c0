#include <spillway/tpch/queries.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
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

constexpr std::array<int, 2> queries{1, 3};

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

/// Q1, the pricing summary report: line items shipped by 1998-09-02,
/// summed and averaged by return flag and line status.
Table q1(detail::QueryPipeline& pipeline) {
    constexpr auto last_ship_date = table::to_date32({1998, 9, 2});
    static std::string const keys[] = {"l_returnflag", "l_linestatus"};
    static std::vector<Aggregate> const partial = {
        {AggregateKind::sum, "l_quantity", "sum_qty"},       {AggregateKind::sum, "l_extendedprice", "sum_base_price"},
        {AggregateKind::sum, "disc_price", "sum_disc_price"}, {AggregateKind::sum, "charge", "sum_charge"},
        {AggregateKind::sum, "l_discount", "sum_disc"},      {AggregateKind::count, "", "count_order"}};
    auto& partials = pipeline.scan(TpchTable::lineitem, [](Table const& lineitem) {
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
                 return doubles(t, [&](std::size_t row) { return price[row] * (1 - discount[row]) * (1 + tax[row]); });
             }},
        };
        return query::group_by(query::project(shipped, columns), keys, partial);
    });
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
    return pipeline.run(summed);
}

/// Q3, the shipping priority query: the ten unshipped orders of the
/// BUILDING segment with the most revenue on 1995-03-15.
Table q3(detail::QueryPipeline& pipeline) {
    constexpr auto date = table::to_date32({1995, 3, 15});
    auto& customers = pipeline.scan(TpchTable::customer, [](Table const& customer) {
        auto const& segment = customer.column("c_mktsegment");
        ColumnExpression const columns[] = {query::column("c_custkey")};
        return query::project(
            keep_rows(customer, [&](std::size_t row) { return segment.string(row) == "BUILDING"; }), columns
        );
    });
    auto& orders = pipeline.scan(TpchTable::orders, [](Table const& order) {
        auto const order_date = values<std::int32_t>(order, "o_orderdate");
        ColumnExpression const columns[] = {query::column("o_orderkey"), query::column("o_custkey"),
                                            query::column("o_orderdate"), query::column("o_shippriority")};
        return query::project(keep_rows(order, [&](std::size_t row) { return order_date[row] < date; }), columns);
    });
    auto& lineitems = pipeline.scan(TpchTable::lineitem, [](Table const& lineitem) {
        auto const ship = values<std::int32_t>(lineitem, "l_shipdate");
        ColumnExpression const columns[] = {query::column("l_orderkey"), {"revenue", revenue}};
        return query::project(keep_rows(lineitem, [&](std::size_t row) { return ship[row] > date; }), columns);
    });
    auto& building_orders = pipeline.broadcast_join(customers, orders, {{"c_custkey"}, {"o_custkey"}, query::JoinKind::semi});
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
    return pipeline.run(top);
}

}  // namespace

TableSource generated_tables(table::TpchGenerator const& generator) {
    return {.num_chunks = [&generator](TpchTable table) { return generator.num_chunks(table); },
            .chunk = [&generator](TpchTable table, std::size_t chunk) { return generator.table(table, chunk); }};
}

std::span<int const> implemented_queries() noexcept { return queries; }

Table run_query(int number, comm::Communicator& communicator, exec::Executor& executor, TableSource const& source,
                QueryConfig const& config, shuffle::OpId first_op_id) {
    SPILLWAY_EXPECTS(std::find(queries.begin(), queries.end(), number) != queries.end(),
                     "TPC-H query " << number << " is not implemented; the queries are 1 and 3", InvalidArgument);
    detail::QueryPipeline pipeline(communicator, executor, source, config, first_op_id);
    switch (number) {
        case 1: return q1(pipeline);
        case 3: return q3(pipeline);
        default: break;
    }
    SPILLWAY_FAIL("TPC-H query " << number << " is not implemented", InvalidArgument);
}

}  // namespace spillway::tpch
