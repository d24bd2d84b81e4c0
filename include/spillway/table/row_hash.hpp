#pragma once
/// @file
/// The 64-bit hash of a row's values, on which partitioning and checksums rest.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <spillway/memory/host_allocator.hpp>
#include <spillway/table/table.hpp>

namespace spillway::table {

/// The seed of the hash that decides a row's partition (`hash_partition`).
inline constexpr std::uint64_t partition_hash_seed = 0;

/// The seed of the hash that `TableChecksum` sums, distinct from
/// `partition_hash_seed` so the checksum does not follow the partitioning.
inline constexpr std::uint64_t checksum_hash_seed = 0x5350494c4c574159;  // "SPILLWAY"

/// The hash of each row's values in `columns`, taken in that order.
///
/// Each value is hashed by its canonical form, so that equal keys hash
/// equally whatever type a column was given or inferred as
/// (docs/table_format.md, "Row hash"):
/// - an integer of any width, and a date (its days since 1970-01-01), as an
///   int64;
/// - a float64 that is integral and within int64's range as that int64
///   (`-0.0` is `0`), every NaN as one NaN, any other as its IEEE bits;
/// - a timestamp of any unit, zoned or not, as its whole microseconds since
///   1970-01-01 00:00:00, rounded down (int64's limit beyond it);
/// - a boolean as the integer 1 or 0;
/// - a string that spells an integer exactly (`42`, `-7`; not `042`, `-0`,
///   `+7`, ` 42` or `4.2e1`) as that integer, one that `parse_date32` reads
///   as a date (`YYYY-MM-DD`, a year of four or more digits, leading zeros
///   allowed, optionally negative) as that date, one that `parse_timestamp`
///   reads as a timestamp as its microseconds (in UTC where it names a
///   zone), `true` and `false` in any case (`parse_boolean`) as 1 and 0,
///   any other as its bytes;
/// - a null as a value of its own, distinct from every other.
///
/// The hash is XXH3-64 chained through its seed: starting from `seed`, each
/// column in turn replaces the running hash `h` with
/// `XXH3_64bits_withSeed(bytes, length, h)`, where the bytes are the
/// little-endian 8 bytes of the canonical int64, the 8 bytes of the double,
/// or the string's bytes; a null replaces it with
/// `XXH3_64bits_withSeed(nullptr, 0, ~h)`. The result depends only on the
/// values, never on the row's position, the chunking or the machine. An
/// empty `columns` gives `seed` for every row.
/// @throws InvalidArgument if a column index is out of range.
[[nodiscard]] std::vector<std::uint64_t> hash_rows(
    Table const& table, std::span<std::size_t const> columns, std::uint64_t seed = partition_hash_seed
);

/// The integer `text` spells exactly: an optional `-` and decimal digits
/// without a leading zero (`0` itself, but not `-0`, `042` or `+4`), within
/// int64's range. `hash_rows` hashes such a string as that integer.
[[nodiscard]] std::optional<std::int64_t> spelled_integer(std::string_view text) noexcept;

/// Row hashes in storage charged to a HOST resource (`memory::HostAllocator`).
using ChargedRowHashes = std::vector<std::uint64_t, memory::HostAllocator<std::uint64_t>>;

/// `hash_rows`, in storage charged to the calling thread's current HOST
/// resource (`memory::ScopedHostResource`), as the operators that hash a
/// table's rows to match or group them keep them.
/// @throws InvalidArgument as `hash_rows` does; what the resource throws.
[[nodiscard]] ChargedRowHashes hash_rows_charged(
    Table const& table, std::span<std::size_t const> columns, std::uint64_t seed = partition_hash_seed
);

}  // namespace spillway::table
