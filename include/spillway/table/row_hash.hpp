#pragma once
/// @file
/// The 64-bit hash of a row's values, on which partitioning and checksums rest.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <spillway/table/table.hpp>

namespace spillway::table {

/// The seed of the hash that decides a row's partition (`hash_partition`).
inline constexpr std::uint64_t partition_hash_seed = 0;

/// The seed of the hash that `TableChecksum` sums, distinct from
/// `partition_hash_seed` so the checksum does not follow the partitioning.
inline constexpr std::uint64_t checksum_hash_seed = 0x5350494c4c574159;  // "SPILLWAY"

/// The hash of each row's values in `columns`, taken in that order.
///
/// The hash is XXH3-64 chained through its seed: starting from `seed`, each
/// column in turn replaces the running hash `h` with
/// `XXH3_64bits_withSeed(value, width, h)`, where the value is the
/// little-endian bytes of an `int32`, `date32` (4 bytes), `int64` or the bit
/// pattern of a `float64` (8 bytes), or a string's bytes; a null replaces it
/// with `XXH3_64bits_withSeed(nullptr, 0, ~h)`. The result depends only on
/// the values and types, never on the row's position, the chunking or the
/// machine (docs/table_format.md). An empty `columns` gives `seed` for every
/// row.
/// @throws InvalidArgument if a column index is out of range.
[[nodiscard]] std::vector<std::uint64_t> hash_rows(
    Table const& table, std::span<std::size_t const> columns, std::uint64_t seed = partition_hash_seed
);

}  // namespace spillway::table
