#pragma once
/// @file
/// Splits a table into partitions by the hash of its key columns.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <spillway/table/table.hpp>

namespace spillway::table {

/// The partition in [0, `partitions`) of a row whose key hash is `hash`:
/// the high 32 bits of the hash scaled to the range (`(hash >> 32) *
/// partitions >> 32`), which is uniform without a division.
/// Requires: `partitions > 0`.
constexpr std::uint32_t partition_index(std::uint64_t hash, std::uint32_t partitions) noexcept {
    return static_cast<std::uint32_t>(((hash >> 32) * partitions) >> 32);
}

/// The partition of each row of `table`: `partition_index` of the
/// `hash_rows` of its `key_columns` with `partition_hash_seed`.
/// @throws InvalidArgument if `key_columns` is empty or holds an index out of
/// range, or `partitions` is 0.
[[nodiscard]] std::vector<std::uint32_t> partition_rows(
    Table const& table, std::span<std::size_t const> key_columns, std::uint32_t partitions
);

/// Splits `table` into `partitions` tables: table `p` holds, in their
/// original order, the rows whose `partition_of_row` is `p`. One pass counts
/// the rows of each partition; then one sequential pass per column scatters
/// each value to the end of its partition.
/// @throws InvalidArgument if `partition_of_row` does not have one entry per
/// row, holds a value `>= partitions`, or `partitions` is 0, or a partition's
/// strings would exceed `Column::max_characters`.
[[nodiscard]] std::vector<Table> split_by_partition(
    Table const& table, std::span<std::uint32_t const> partition_of_row, std::uint32_t partitions
);

/// Splits `table` into `partitions` tables by the hash of its `key_columns`:
/// `split_by_partition(table, partition_rows(table, key_columns, partitions), partitions)`.
/// Rows with equal keys always land in the same partition, whatever table
/// or chunk they come in.
/// @throws InvalidArgument as `partition_rows` does.
[[nodiscard]] std::vector<Table> hash_partition(
    Table const& table, std::span<std::size_t const> key_columns, std::uint32_t partitions
);

}  // namespace spillway::table
