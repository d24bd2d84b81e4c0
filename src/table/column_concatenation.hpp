#pragma once
/// @file
/// Joins the buffers of several columns of one type into one column, wherever
/// those buffers are: in `Column`s, or in packed payloads.

#include <cstddef>
#include <span>

#include <spillway/table/column.hpp>

namespace spillway::table::detail {

/// The buffers of a valid column of `rows` rows (see `Column`); `validity`
/// is empty when it has no nulls.
struct ColumnParts {
    std::size_t rows = 0;
    std::span<std::byte const> validity;
    std::span<std::byte const> data;
    std::span<std::byte const> characters;
};

/// The column of `type` holding the rows of `parts`, in their order; each of
/// its buffers is allocated once.
/// @throws InvalidArgument if it would exceed `Column::max_rows` or
/// `Column::max_characters`.
Column concatenate_columns(DataType type, std::span<ColumnParts const> parts);

}  // namespace spillway::table::detail
