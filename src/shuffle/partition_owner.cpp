#include <spillway/shuffle/partition_owner.hpp>

namespace spillway::shuffle {

comm::Rank partition_owner(
    PartitionOwner owner, PartitionId partition, PartitionId total_partitions, comm::Rank nranks
) noexcept {
    auto const ranks = static_cast<std::uint64_t>(nranks);
    if (owner == PartitionOwner::round_robin) {
        return static_cast<comm::Rank>(partition % ranks);
    }
    // Rank r starts at floor(r * total / nranks); the owner is the last rank
    // that starts at or before `partition`.
    return static_cast<comm::Rank>(((std::uint64_t{partition} + 1) * ranks - 1) / total_partitions);
}

std::vector<PartitionId> owned_partitions(
    PartitionOwner owner, PartitionId total_partitions, comm::Rank nranks, comm::Rank rank
) {
    std::vector<PartitionId> partitions;
    for (PartitionId partition = 0; partition < total_partitions; ++partition) {
        if (partition_owner(owner, partition, total_partitions, nranks) == rank) {
            partitions.push_back(partition);
        }
    }
    return partitions;
}

}  // namespace spillway::shuffle
