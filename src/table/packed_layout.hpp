#pragma once
/// @file
/// The layout of a packed table (docs/table_format.md), shared by the code
/// that packs whole tables and the code that packs a table's partitions.

#include <cstddef>
#include <span>
#include <vector>

#include <spillway/table/data_type.hpp>
#include <spillway/table/schema.hpp>

#include "bitmap.hpp"

namespace spillway::table::detail {

/// `bytes` rounded up to the 8-byte alignment of every buffer in the payload.
constexpr std::size_t padded(std::size_t bytes) noexcept { return (bytes + 7) & ~std::size_t{7}; }

/// The three buffers of a column as they are laid out in the payload.
struct BufferSizes {
    std::size_t validity;
    std::size_t data;
    std::size_t characters;

    [[nodiscard]] std::size_t padded_total() const noexcept {
        return padded(validity) + padded(data) + padded(characters);
    }
};

/// The buffers of a column of `rows` rows of `type`, with a validity bitmap
/// if `has_validity` and `characters` bytes of characters.
constexpr BufferSizes buffer_sizes(DataType type, std::size_t rows, bool has_validity, std::size_t characters) noexcept {
    return {has_validity ? bitmap_bytes(rows) : 0,
            type == DataType::string ? (rows + 1) * sizeof(std::int32_t) : rows * data_width(type), characters};
}

/// What the metadata says of one column besides its field.
struct PackedColumn {
    bool has_validity;
    std::size_t characters;
};

/// @throws InvalidArgument if a name of `fields` is longer than the 65535
///         bytes the packed format allows.
void check_packable_names(std::span<Field const> fields);

/// The metadata of a table of `fields` with `rows` rows whose columns are
/// `columns` and whose payload, already written, is `payload`.
/// @throws InvalidArgument if a column name is longer than 65535 bytes.
std::vector<std::byte> packed_metadata(std::span<Field const> fields, std::size_t rows,
                                       std::span<PackedColumn const> columns, std::span<std::byte const> payload);

}  // namespace spillway::table::detail
