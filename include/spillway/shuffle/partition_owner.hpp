#pragma once
/// @file
/// Which rank owns (receives and extracts) each partition of a shuffle.

#include <cstdint>
#include <vector>

#include <spillway/comm/message.hpp>

namespace spillway::shuffle {

/// A partition of a shuffle, in `[0, total_partitions)`.
using PartitionId = std::uint32_t;

/// How a shuffle's partitions are assigned to ranks.
enum class PartitionOwner {
    /// Partition `p` goes to rank `p % nranks`.
    round_robin,
    /// Rank `r` gets the `r`-th of `nranks` contiguous, nearly equal ranges:
    /// `[r * total / nranks, (r + 1) * total / nranks)`. With fewer
    /// partitions than ranks, some ranks get none.
    contiguous,
};

/// The rank that owns `partition` of `total_partitions` among `nranks` ranks.
/// Requires: `partition < total_partitions`, `nranks > 0` (not checked).
[[nodiscard]] comm::Rank partition_owner(
    PartitionOwner owner, PartitionId partition, PartitionId total_partitions, comm::Rank nranks
) noexcept;

/// The partitions `rank` owns, in increasing order (possibly none).
/// Requires: `0 <= rank < nranks` (not checked).
[[nodiscard]] std::vector<PartitionId> owned_partitions(
    PartitionOwner owner, PartitionId total_partitions, comm::Rank nranks, comm::Rank rank
);

}  // namespace spillway::shuffle
