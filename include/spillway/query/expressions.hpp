#pragma once
/// @file
/// Row-wise expressions written as lambdas over columns, and the two
/// operators built on them: filter (keep the rows a predicate selects) and
/// project (compute the columns of the output).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/table/column_builder.hpp>
#include <spillway/table/table.hpp>

namespace spillway::query {

/// One byte per row of a table: nonzero keeps the row.
using RowMask = std::vector<std::uint8_t>;

/// What `filter` evaluates: the rows of a table to keep. It may run on
/// several threads at once, each call with a table of its own.
using Predicate = std::function<RowMask(table::Table const&)>;

/// An output column of `project`: its name, and how it is computed from the
/// input table (a column with one row per input row).
struct ColumnExpression {
    std::string name;
    std::function<table::Column(table::Table const&)> compute;
};

/// The rows of `table` whose byte in `keep` is nonzero, in their order.
/// @throws InvalidArgument if `keep` does not have one byte per row.
[[nodiscard]] table::Table filter(table::Table const& table, std::span<std::uint8_t const> keep);

/// The columns named `columns`, in that order, of the rows of `table` whose
/// byte in `keep` is nonzero: `filter` and then those columns, without
/// copying the others.
/// @throws InvalidArgument if `keep` does not have one byte per row, a name
///         is not a column of `table` (naming those it has), or a name
///         repeats.
[[nodiscard]] table::Table filter(
    table::Table const& table, std::span<std::uint8_t const> keep, std::span<std::string const> columns
);

/// The rows of `table` that `predicate` keeps.
/// @throws InvalidArgument as above, if the predicate's mask has another length.
[[nodiscard]] table::Table filter(table::Table const& table, Predicate const& predicate);

/// A table of the columns `columns` compute from `table`, in that order.
/// @throws InvalidArgument if an expression is empty, its column does not
///         have one row per input row, or two names repeat.
[[nodiscard]] table::Table project(table::Table const& table, std::span<ColumnExpression const> columns);

/// The expression that passes column `name` through unchanged.
[[nodiscard]] ColumnExpression column(std::string name);

/// The expression that passes column `name` through under the name `alias`.
[[nodiscard]] ColumnExpression column(std::string name, std::string alias);

/// A column of `rows` values of type `type`, row `i` holding `value(i)`
/// (an `int32_t` for `int32` and `date32`, an `int64_t` for `int64` and the
/// timestamps, a `double`, a `bool` for `boolean`, or something convertible
/// to `std::string_view` for `string`; a narrower integer, a `float`, or a
/// `bool` for another type, is widened as C++ promotes it).
/// @throws InvalidArgument if `value` returns another type than `type` stores
///         (found at the first row: a column of 0 rows never calls `value`).
template <typename Function>
[[nodiscard]] table::Column make_column(table::DataType type, std::size_t rows, Function&& value) {
    using Value = std::decay_t<std::invoke_result_t<Function&, std::size_t>>;
    if constexpr (std::is_same_v<Value, bool>) {
        if (type != table::DataType::boolean) {
            return make_column(type, rows, [&value](std::size_t row) { return +value(row); });  // promoted to int
        }
    }
    if constexpr (std::is_arithmetic_v<Value>) {
        if (table::stores_values_as<Value>(type)) {
            // Written in place: a builder's append checks and counts each row.
            table::ColumnBuffer data(rows * sizeof(Value));
            auto* values = reinterpret_cast<Value*>(data.data());
            for (std::size_t row = 0; row < rows; ++row) {
                values[row] = value(row);
            }
            return table::Column::from_buffers(type, rows, {}, std::move(data), {});
        }
    }
    table::ColumnBuilder builder(type);
    builder.reserve(rows);
    for (std::size_t row = 0; row < rows; ++row) {
        builder.append(value(row));
    }
    return builder.finish();
}

/// A mask of `rows` bytes, row `i` kept when `keep(i)` is true.
template <typename Function>
[[nodiscard]] RowMask make_mask(std::size_t rows, Function&& keep) {
    RowMask mask(rows);
    for (std::size_t row = 0; row < rows; ++row) {
        mask[row] = keep(row) ? 1 : 0;
    }
    return mask;
}

}  // namespace spillway::query
