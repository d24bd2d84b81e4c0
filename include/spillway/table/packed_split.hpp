#pragma once
/// @file
/// Splits a table by partition straight into packed pieces.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <spillway/table/table.hpp>

namespace spillway::table {

/// A table split by partition into packed pieces: the piece of partition `p`
/// is, byte for byte, what `pack_into` writes for table `p` of
/// `split_by_partition(table, partition_of_row, partitions)`, but those
/// tables are never made. A shuffle into many partitions cuts each input
/// table into many small pieces, and making every piece a table of its own
/// before packing it cost more than the packing.
///
/// Use: construct it (which counts each piece's rows, characters and nulls),
/// size a payload buffer for each piece by `packed_size`, then `pack_into`.
///
/// Lifetime: `table` and `partition_of_row` must outlive it.
/// Thread safety: const member functions may be called concurrently.
class PackedSplit {
  public:
    /// Plans the split of `table` that sends row `r` to partition
    /// `partition_of_row[r]`.
    /// @throws InvalidArgument as `split_by_partition` does.
    PackedSplit(Table const& table, std::span<std::uint32_t const> partition_of_row, std::uint32_t partitions);

    /// The number of partitions.
    [[nodiscard]] std::uint32_t partitions() const noexcept { return static_cast<std::uint32_t>(rows_.size()); }
    /// The rows of partition `partition`'s piece. Requires: `partition < partitions()`.
    [[nodiscard]] std::size_t rows(std::uint32_t partition) const noexcept { return rows_[partition]; }
    /// The payload bytes of partition `partition`'s piece (`packed_size` of
    /// its table). Requires: `partition < partitions()`.
    [[nodiscard]] std::size_t packed_size(std::uint32_t partition) const noexcept { return sizes_[partition]; }

    /// Writes each piece's payload to the start of `payloads[p]` and returns
    /// the metadata of each piece, by partition, as `pack_into` does. The
    /// payload of a piece without rows may be an empty span: that piece is
    /// skipped and its metadata is empty.
    /// @throws InvalidArgument if `payloads` does not hold one span per
    ///         partition, a span is smaller than its piece (and not an empty
    ///         one for a piece without rows), or a column name is longer than
    ///         65535 bytes; nothing is written then.
    [[nodiscard]] std::vector<std::vector<std::byte>> pack_into(std::span<std::span<std::byte> const> payloads) const;

  private:
    Table const& table_;
    std::span<std::uint32_t const> partition_of_row_;
    std::vector<std::uint32_t> rows_;
    std::vector<std::uint32_t> row_in_piece_;  ///< by row: its place in its partition's piece
    /// By column, then partition: bytes of characters (`string` only).
    std::vector<std::vector<std::size_t>> characters_;
    /// By column, then partition: whether the piece has a null (columns with nulls only).
    std::vector<std::vector<std::uint8_t>> has_nulls_;
    std::vector<std::size_t> sizes_;
};

}  // namespace spillway::table
