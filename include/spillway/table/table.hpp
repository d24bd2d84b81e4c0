#pragma once
/// @file
/// A table: a schema and one column per field, all of the same length.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <spillway/table/column.hpp>
#include <spillway/table/schema.hpp>

namespace spillway::table {

/// Columns of equal length with their names and types.
///
/// Thread safety: immutable, so const member functions may be called
/// concurrently. Copies are deep and independent; moves are cheap.
class Table {
  public:
    /// No columns and no rows.
    Table() = default;

    /// A table of `columns` described by `schema`.
    /// @throws InvalidArgument if the number of columns, a column's type or a
    /// column's length does not match.
    Table(Schema schema, std::vector<Column> columns);

    /// The names and types of the columns.
    [[nodiscard]] Schema const& schema() const noexcept { return schema_; }
    /// The number of rows; 0 for a table without columns.
    [[nodiscard]] std::size_t num_rows() const noexcept { return num_rows_; }
    /// The number of columns.
    [[nodiscard]] std::size_t num_columns() const noexcept { return columns_.size(); }
    /// Every column, in schema order.
    [[nodiscard]] std::span<Column const> columns() const noexcept { return columns_; }
    /// Column `index`.
    /// @throws InvalidArgument if `index >= num_columns()`.
    [[nodiscard]] Column const& column(std::size_t index) const;
    /// The column named `name`.
    /// @throws InvalidArgument naming the columns there are if none is called `name`.
    [[nodiscard]] Column const& column(std::string_view name) const;
    /// The bytes of every column's buffers together.
    [[nodiscard]] std::size_t byte_size() const noexcept;
    /// The columns, moved out without a copy; the table is left without
    /// columns or rows.
    [[nodiscard]] std::vector<Column> release_columns() && noexcept;

    /// A copy of the `count` rows from `begin`.
    /// @throws InvalidArgument if `begin + count > num_rows()`.
    [[nodiscard]] Table slice(std::size_t begin, std::size_t count) const;
    /// The rows `rows[0], rows[1], ...`, in that order (see `Column::take`).
    /// @throws InvalidArgument if a row is out of range or a column would
    /// exceed its limits.
    [[nodiscard]] Table take(std::span<std::uint32_t const> rows) const;
    /// A copy of the columns `columns`, in that order.
    /// @throws InvalidArgument if a column index is out of range or repeated.
    [[nodiscard]] Table select(std::span<std::size_t const> columns) const;

    /// The rows of every table in `tables`, in order. An empty span gives an
    /// empty table.
    /// @throws InvalidArgument if the schemas differ or a column would exceed
    /// its limits.
    [[nodiscard]] static Table concatenate(std::span<Table const> tables);

    /// Whether both have equal schemas and equal columns (see `Column`'s `==`).
    friend bool operator==(Table const&, Table const&) = default;

  private:
    Schema schema_;
    std::vector<Column> columns_;  ///< one per field of schema_, each num_rows_ long
    std::size_t num_rows_ = 0;
};

}  // namespace spillway::table
