#include <spillway/query/expressions.hpp>

#include <utility>

#include <spillway/table/schema.hpp>

namespace spillway::query {

namespace {

/// The indices of the rows whose byte in `keep` is nonzero, in order.
/// @throws InvalidArgument if `keep` does not have one byte per row of `table`.
std::vector<std::uint32_t> kept_rows(table::Table const& table, std::span<std::uint8_t const> keep) {
    SPILLWAY_EXPECTS(keep.size() == table.num_rows(),
                     "a filter's mask has " << keep.size() << " rows for a table of " << table.num_rows(),
                     InvalidArgument);
    // Every row is written and only a kept one advances the end: no branch
    // on the mask, which a predicate keeping some rows makes unpredictable.
    std::vector<std::uint32_t> rows(table.num_rows());
    std::size_t kept = 0;
    for (std::size_t row = 0; row < keep.size(); ++row) {
        rows[kept] = static_cast<std::uint32_t>(row);
        kept += keep[row] != 0 ? 1 : 0;
    }
    rows.resize(kept);
    return rows;
}

}  // namespace

table::Table filter(table::Table const& table, std::span<std::uint8_t const> keep) {
    auto const rows = kept_rows(table, keep);
    if (rows.size() == table.num_rows()) {
        return table;
    }
    return table.take(rows);
}

table::Table filter(
    table::Table const& table, std::span<std::uint8_t const> keep, std::span<std::string const> columns
) {
    auto const rows = kept_rows(table, keep);
    std::vector<table::Field> fields;
    std::vector<table::Column> taken;
    for (auto const& name : columns) {
        auto const index = table.schema().index_of(name);
        fields.push_back(table.schema().field(index));
        taken.push_back(rows.size() == table.num_rows() ? table.column(index) : table.column(index).take(rows));
    }
    return {table::Schema(std::move(fields)), std::move(taken)};
}

table::Table filter(table::Table const& table, Predicate const& predicate) {
    SPILLWAY_EXPECTS(static_cast<bool>(predicate), "a filter needs a predicate", InvalidArgument);
    return filter(table, predicate(table));
}

table::Table project(table::Table const& table, std::span<ColumnExpression const> columns) {
    std::vector<table::Field> fields;
    std::vector<table::Column> computed;
    fields.reserve(columns.size());
    computed.reserve(columns.size());
    for (auto const& expression : columns) {
        SPILLWAY_EXPECTS(static_cast<bool>(expression.compute),
                         "the expression of column '" << expression.name << "' is empty", InvalidArgument);
        auto column = expression.compute(table);
        SPILLWAY_EXPECTS(column.size() == table.num_rows(),
                         "the expression of column '" << expression.name << "' gave " << column.size()
                                                      << " rows for a table of " << table.num_rows(),
                         InvalidArgument);
        fields.push_back({.name = expression.name, .type = column.type()});
        computed.push_back(std::move(column));
    }
    return {table::Schema(std::move(fields)), std::move(computed)};
}

ColumnExpression column(std::string name) {
    auto alias = name;
    return column(std::move(name), std::move(alias));
}

ColumnExpression column(std::string name, std::string alias) {
    return {.name = std::move(alias), .compute = [name = std::move(name)](table::Table const& table) {
                return table.column(name);
            }};
}

}  // namespace spillway::query
