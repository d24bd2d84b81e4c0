#pragma once
/// @file
/// The row hashes that a table checksum sums.

#include <cstdint>
#include <vector>

#include <spillway/table/table.hpp>

namespace spillway::table::detail {

/// The hash of each row of every column of `table`, with `checksum_hash_seed`:
/// `hash_rows`, but with each timestamp hashed by its own ticks rather than
/// its microseconds, so that a checksum sees a change below a microsecond.
[[nodiscard]] std::vector<std::uint64_t> checksum_hashes(Table const& table);

}  // namespace spillway::table::detail
