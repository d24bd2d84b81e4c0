#pragma once
/// @file
/// Builds a `Table` column by column.

#include <cstddef>
#include <span>
#include <vector>

#include <spillway/table/column_builder.hpp>
#include <spillway/table/schema.hpp>
#include <spillway/table/table.hpp>

namespace spillway::table {

/// One `ColumnBuilder` per field of a schema; `finish` turns them into a table.
///
/// Thread safety: externally synchronized. Distinct column builders may be
/// filled by distinct threads.
class TableBuilder {
  public:
    /// Empty builders for the columns of `schema`, each with room for
    /// `expected_rows` rows.
    explicit TableBuilder(Schema schema, std::size_t expected_rows = 0);

    /// The schema of the table being built.
    [[nodiscard]] Schema const& schema() const noexcept { return schema_; }
    /// The builder of column `index`.
    /// @throws InvalidArgument if `index` is out of range.
    [[nodiscard]] ColumnBuilder& column(std::size_t index);
    /// The builders of every column, in schema order.
    [[nodiscard]] std::span<ColumnBuilder> columns() noexcept { return columns_; }

    /// The table of every row appended; the builders are empty afterwards.
    /// @throws InvalidArgument, keeping every value appended, if the columns
    ///         have different lengths.
    [[nodiscard]] Table finish();

  private:
    Schema schema_;
    std::vector<ColumnBuilder> columns_;  ///< one per field of schema_
};

}  // namespace spillway::table
