#include "shuffle_check.hpp"

#include <algorithm>

#include <spillway/core/error.hpp>
#include <spillway/table/hash_partition.hpp>

namespace spillway::cli {

void ShuffleCheck::add(table::Table const& chunk, std::span<std::size_t const> key_columns, std::uint32_t partition,
                       std::uint32_t partitions) {
    SPILLWAY_EXPECTS(partition < partitions,
                     "partition " << partition << " is not one of the " << partitions << " partitions", InvalidArgument);
    checksum += table::TableChecksum::of(chunk);
    auto const partition_of_row = table::partition_rows(chunk, key_columns, partitions);
    misplaced_rows += static_cast<std::uint64_t>(
        std::count_if(partition_of_row.begin(), partition_of_row.end(), [&](auto row) { return row != partition; }));
}

}  // namespace spillway::cli
