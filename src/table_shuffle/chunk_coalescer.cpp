#include <spillway/table_shuffle/chunk_coalescer.hpp>

#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/table_shuffle/packed_partitions.hpp>

namespace spillway::table_shuffle {
namespace {

/// What the index keeps per piece held beside its metadata: its place in a
/// vector that grows by doubling.
constexpr std::size_t bytes_per_piece = 2 * sizeof(shuffle::PackedData);

}  // namespace

ChunkCoalescer::ChunkCoalescer(memory::BufferResource& resource, std::size_t budget_bytes, std::size_t target_bytes)
    : resource_(resource), budget_bytes_(budget_bytes), target_bytes_(target_bytes), bookkeeping_(resource) {}

ChunkCoalescer::Chunks ChunkCoalescer::add(Chunks pieces) {
    for (auto const& [partition, piece] : pieces) {
        SPILLWAY_EXPECTS(
            piece.data.resource() == &resource_ && piece.data.mem_type() == memory::MemoryType::HOST,
            "ChunkCoalescer: the piece of partition " << partition
                                                      << " is not a HOST buffer of the coalescer's resource",
            InvalidArgument
        );
    }
    for (auto& [partition, piece] : pieces) {
        hold(partition, std::move(piece));
    }
    count_bookkeeping();
    auto const ready = ready_partitions();
    return take(ready);
}

ChunkCoalescer::Chunks ChunkCoalescer::flush() {
    std::vector<shuffle::PartitionId> partitions;
    partitions.reserve(held_.size());
    for (auto const& [partition, held] : held_) {
        partitions.push_back(partition);
    }
    return take(partitions);
}

void ChunkCoalescer::hold(shuffle::PartitionId partition, shuffle::PackedData&& piece) {
    auto& held = held_[partition];
    held_bytes_ += piece.data.size();
    held_metadata_bytes_ += piece.metadata.capacity();
    held.bytes += piece.data.size();
    held.pieces.push_back(std::move(piece));
    ++held_pieces_;
}

std::vector<shuffle::PartitionId> ChunkCoalescer::ready_partitions() const {
    std::vector<shuffle::PartitionId> ready;
    for (auto const& [partition, held] : held_) {
        if (held_bytes_ > budget_bytes_ || held.bytes >= target_bytes_) {
            ready.push_back(partition);
        }
    }
    return ready;
}

ChunkCoalescer::Chunks ChunkCoalescer::take(std::span<shuffle::PartitionId const> partitions) {
    // Merge first, each partition in place, so that a failure leaves every
    // piece held.
    for (auto const partition : partitions) {
        auto& held = held_.find(partition)->second;
        if (held.pieces.size() < 2) {
            continue;
        }
        // The pieces were packed in this process and have stayed in its memory.
        auto chunk = pack_concatenated(held.pieces, resource_, table::PayloadChecksum::trust);
        for (auto const& piece : held.pieces) {
            held_metadata_bytes_ -= piece.metadata.capacity();
        }
        held_pieces_ -= held.pieces.size() - 1;
        held_metadata_bytes_ += chunk.metadata.capacity();
        held_bytes_ = held_bytes_ - held.bytes + chunk.data.size();
        held.bytes = chunk.data.size();
        held.pieces.clear();
        held.pieces.push_back(std::move(chunk));  // into the capacity just cleared
    }
    Chunks chunks;
    chunks.reserve(partitions.size());
    for (auto const partition : partitions) {
        auto const held = held_.find(partition);
        auto& chunk = held->second.pieces.front();
        held_bytes_ -= held->second.bytes;
        held_metadata_bytes_ -= chunk.metadata.capacity();
        --held_pieces_;
        chunks.emplace(partition, std::move(chunk));
        held_.erase(held);
    }
    count_bookkeeping();
    return chunks;
}

void ChunkCoalescer::count_bookkeeping() noexcept {
    // Per partition held, the index's node and its bucket's link.
    constexpr auto bytes_per_partition = sizeof(decltype(held_)::value_type) + 4 * sizeof(void*);
    bookkeeping_.cover(held_metadata_bytes_ + held_pieces_ * bytes_per_piece + held_.size() * bytes_per_partition);
}

}  // namespace spillway::table_shuffle
