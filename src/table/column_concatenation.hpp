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

/// The rows and characters of the column that joins `parts`, and whether
/// any part has a validity bitmap.
struct ConcatenationSize {
    std::size_t rows = 0;
    std::size_t characters = 0;
    bool has_validity = false;
};

/// The size of the column that joins `parts`.
/// @throws InvalidArgument if it would exceed `Column::max_rows` or
/// `Column::max_characters`.
ConcatenationSize concatenation_size(std::span<ColumnParts const> parts);

/// Writes the buffers of the column of `type` that joins `parts`, of `size`
/// (`concatenation_size(parts)`): its validity bitmap, unless `validity` is
/// empty (rows of parts without a bitmap are valid; the bits after the last
/// row are clear), its data (a string column's offsets) and its characters.
/// Requires: each span holds what `size` needs.
void write_concatenation(DataType type, std::span<ColumnParts const> parts, ConcatenationSize size,
                         std::span<std::byte> validity, std::span<std::byte> data,
                         std::span<std::byte> characters) noexcept;

/// The column of `type` holding the rows of `parts`, in their order; each of
/// its buffers is allocated once. It has a validity bitmap if a part has one.
/// @throws InvalidArgument as `concatenation_size` does.
Column concatenate_columns(DataType type, std::span<ColumnParts const> parts);

}  // namespace spillway::table::detail
