#pragma once
/// @file
/// The two passes of splitting a table by partition: counting what each
/// partition's piece holds, then scattering each column's rows into buffers
/// sized by those counts. `split_by_partition` scatters into new columns,
/// `PackedSplit` straight into packed payloads, whose columns it lays out as
/// `PackedGather` does (`place_packed_column`).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <spillway/table/table.hpp>

#include "packed_layout.hpp"

namespace spillway::table::detail {

/// What each partition's piece of a table holds.
struct PartitionCounts {
    /// Rows, by partition.
    std::vector<std::uint32_t> rows;
    /// By row: its place in its partition's piece (the rows before it there).
    std::vector<std::uint32_t> row_in_piece;
    /// By column, then partition: bytes of characters. Empty for a column
    /// that is not `string`.
    std::vector<std::vector<std::size_t>> characters;
    /// By column, then partition: whether the piece has a null. Empty for a
    /// column without nulls.
    std::vector<std::vector<std::uint8_t>> has_nulls;
};

/// The pieces `table` splits into when row `r` goes to partition
/// `partition_of_row[r]`.
/// @throws InvalidArgument if `partition_of_row` does not have one entry per
/// row, holds a value `>= partitions`, or `partitions` is 0, or a piece's
/// strings would exceed `Column::max_characters`.
PartitionCounts count_partitions(Table const& table, std::span<std::uint32_t const> partition_of_row,
                                 std::uint32_t partitions);

/// Where one partition's piece of a column goes, each buffer sized by
/// `PartitionCounts`: a validity bitmap (null if the piece has no nulls),
/// the values or `string` offsets, and the characters (null unless `string`).
struct PieceBuffers {
    std::byte* validity = nullptr;
    std::byte* data = nullptr;
    std::byte* characters = nullptr;
};

/// Lays out one column of a packed piece at `payload + position`, its three
/// buffers of `sizes` each padded to 8 bytes as the packed format does,
/// zeroes the padding, moves `position` past them and returns where the
/// buffers start: the validity bitmap null where `sizes.validity` is 0.
PieceBuffers place_packed_column(std::byte* payload, std::size_t& position, BufferSizes sizes) noexcept;

/// Copies each row of `column` to the end of its partition's piece, keeping
/// their order, in one sequential pass: bitmaps (whose bits past the piece's
/// rows are cleared), values, and for `string` offsets that start at 0 and
/// the characters. `rows` and `row_in_piece` are the `PartitionCounts` of the
/// column's table. A partition without rows may have null buffers.
void scatter_column(Column const& column, std::span<std::uint32_t const> partition_of_row,
                    std::span<std::uint32_t const> rows, std::span<std::uint32_t const> row_in_piece,
                    std::span<PieceBuffers const> pieces);

}  // namespace spillway::table::detail
