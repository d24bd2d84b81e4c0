#pragma once
/// @file
/// Packs the rows of several tables by partition, one packed table per
/// partition.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <spillway/table/table.hpp>

namespace spillway::table {

/// Several tables of one schema split by partition and packed, one piece per
/// partition holding that partition's rows of every table: the piece of
/// partition `p` is, byte for byte, what `pack_into` writes for the
/// concatenation of each table's rows of `p`, table after table, each in
/// its order. Neither the split tables nor their concatenation are made.
///
/// A shuffle into many partitions cuts each table into pieces of a few KiB;
/// gathering a partition's rows of many tables at once makes pieces that
/// many times larger without cutting and merging small ones.
///
/// Use: construct it (which groups each table's rows by partition and counts
/// what each piece holds), size a payload for a piece by `packed_size`, then
/// `pack_into`, in any order of partitions.
///
/// Lifetime: the tables must outlive it; the partition ids are not kept.
/// Thread safety: const member functions may be called concurrently.
class PackedGather {
  public:
    /// Plans the pieces that send row `r` of `tables[t]` to partition
    /// `partition_of_row[t][r]`.
    /// @throws InvalidArgument if `partition_of_row` does not hold one span
    ///         per table, a span does not have one entry per row of its
    ///         table, an id is `partitions` or more, `partitions` is 0, the
    ///         tables' schemas differ, or a piece's strings would exceed
    ///         `Column::max_characters`.
    PackedGather(std::span<Table const> tables, std::span<std::span<std::uint32_t const> const> partition_of_row,
                 std::uint32_t partitions);

    /// The number of partitions.
    [[nodiscard]] std::uint32_t partitions() const noexcept { return static_cast<std::uint32_t>(sizes_.size()); }
    /// The rows of partition `partition`'s piece. Requires: `partition < partitions()`.
    [[nodiscard]] std::size_t rows(std::uint32_t partition) const noexcept { return rows_[partition]; }
    /// The payload bytes of partition `partition`'s piece. Requires:
    /// `partition < partitions()`.
    [[nodiscard]] std::size_t packed_size(std::uint32_t partition) const noexcept { return sizes_[partition]; }

    /// Writes the payload of partition `partition`'s piece to the start of
    /// `payload` and returns its metadata, as `pack_into` does.
    /// @throws InvalidArgument if `partition` is out of range, `payload` is
    ///         smaller than `packed_size(partition)`, or a column name is
    ///         longer than 65535 bytes; nothing is written then.
    [[nodiscard]] std::vector<std::byte> pack_into(std::uint32_t partition, std::span<std::byte> payload) const;

  private:
    /// One table's rows, grouped by partition.
    struct GroupedRows {
        std::vector<std::uint32_t> rows;    ///< row numbers, by partition, each partition's ascending
        std::vector<std::uint32_t> starts;  ///< where each partition's rows start in `rows`, and the end
    };

    std::span<Table const> tables_;
    std::vector<GroupedRows> grouped_;  ///< by table
    std::vector<std::size_t> rows_;     ///< by partition
    /// By column, then partition: bytes of characters (`string` only).
    std::vector<std::vector<std::size_t>> characters_;
    /// By column, then partition: whether the piece has a null (columns
    /// with a null in some table only).
    std::vector<std::vector<std::uint8_t>> has_nulls_;
    std::vector<std::size_t> sizes_;
};

}  // namespace spillway::table
