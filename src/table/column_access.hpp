#pragma once
/// @file
/// Builds columns inside the table module from buffers it has checked.

#include <string>

#include <spillway/table/column.hpp>

namespace spillway::table::detail {

/// What makes the buffers an invalid column of `size` rows of `type` (see
/// `Column::from_buffers`), or an empty string if they are valid.
std::string column_problem(DataType type, std::size_t size, std::span<std::byte const> validity,
                           std::span<std::byte const> data, std::span<std::byte const> characters);

/// Lets the table module construct columns without checking the buffers again.
struct ColumnAccess {
    /// The column of the buffers; counts the nulls, clears the bits past
    /// `size` and drops a bitmap without nulls.
    /// Requires: `column_problem` finds nothing wrong with the buffers.
    static Column make(DataType type, std::size_t size, ColumnBuffer validity, ColumnBuffer data,
                       ColumnBuffer characters);
};

}  // namespace spillway::table::detail
