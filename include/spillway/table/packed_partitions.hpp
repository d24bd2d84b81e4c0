#pragma once
/// @file
/// Deprecated: `hash_partition_and_pack` and `unpack(PackedData)` moved to
/// module `table_shuffle` (`<spillway/table_shuffle/packed_partitions.hpp>`,
/// target `spillway::table_shuffle`), so that `table` no longer depends on
/// `shuffle`. This header keeps the old names compiling for code that links
/// `spillway::table_shuffle` (or `spillway::spillway`); it will be removed.

#include <spillway/table_shuffle/packed_partitions.hpp>

namespace spillway::table {

using table_shuffle::hash_partition_and_pack;
using table_shuffle::unpack;

}  // namespace spillway::table
