#pragma once
/// @file
/// The two passes of splitting a table by partition: counting what each
/// partition's piece holds, then scattering each column's rows into buffers
/// sized by those counts. `split_by_partition` scatters into new columns,
/// `PackedSplit` straight into packed payloads.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <spillway/table/table.hpp>

namespace spillway::table::detail {

/// What each partition's piece of a table holds.
struct PartitionCounts {
    /// Rows, by partition.
    std::vector<std::uint32_t> rows;
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

/// Copies each row of `column` to the end of its partition's piece, keeping
/// their order, in one sequential pass: bitmaps (whose bits past the piece's
/// rows are cleared), values, and for `string` offsets that start at 0 and
/// the characters. `rows` is `PartitionCounts::rows`. A partition without
/// rows may have null buffers.
void scatter_column(Column const& column, std::span<std::uint32_t const> partition_of_row,
                    std::span<std::uint32_t const> rows, std::span<PieceBuffers const> pieces);

}  // namespace spillway::table::detail
