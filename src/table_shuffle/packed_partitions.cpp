#include <spillway/table_shuffle/packed_partitions.hpp>

#include <optional>
#include <vector>

#include <spillway/table/hash_partition.hpp>
#include <spillway/table/packed_split.hpp>
#include <spillway/table/packed_table.hpp>

namespace spillway::table_shuffle {

std::unordered_map<shuffle::PartitionId, shuffle::PackedData> hash_partition_and_pack(
    table::Table const& table, std::span<std::size_t const> key_columns, shuffle::PartitionId partitions,
    memory::BufferResource& resource, memory::AllowOverbooking overbooking) {
    auto const partition_of_row = table::partition_rows(table, key_columns, partitions);
    table::PackedSplit const split(table, partition_of_row, partitions);
    auto const total = packed_pieces_size(split);
    // The pieces are alive together, so they are reserved together.
    auto reservation = overbooking == memory::AllowOverbooking::no
                           ? resource.reserve_or_wait(total)
                           : resource.reserve_and_spill(memory::MemoryType::HOST, total, overbooking);
    return pack_pieces(split, resource, reservation);
}

std::size_t packed_pieces_size(table::PackedSplit const& split) noexcept {
    std::size_t total = 0;
    for (shuffle::PartitionId partition = 0; partition < split.partitions(); ++partition) {
        total += split.rows(partition) == 0 ? 0 : split.packed_size(partition);
    }
    return total;
}

std::unordered_map<shuffle::PartitionId, shuffle::PackedData> pack_pieces(
    table::PackedSplit const& split, memory::BufferResource& resource, memory::MemoryReservation& reservation
) {
    auto const partitions = split.partitions();
    std::vector<std::optional<memory::Buffer>> buffers(partitions);
    std::vector<std::span<std::byte>> payloads(partitions);
    for (shuffle::PartitionId partition = 0; partition < partitions; ++partition) {
        if (split.rows(partition) != 0) {
            buffers[partition] = resource.make_buffer(split.packed_size(partition), reservation);
            payloads[partition] = buffers[partition]->data();
        }
    }
    auto metadata = split.pack_into(payloads);
    std::unordered_map<shuffle::PartitionId, shuffle::PackedData> chunks;
    for (shuffle::PartitionId partition = 0; partition < partitions; ++partition) {
        if (buffers[partition]) {
            chunks.emplace(partition,
                           shuffle::PackedData{std::move(metadata[partition]), std::move(*buffers[partition])});
        }
    }
    return chunks;
}

table::Table unpack(shuffle::PackedData const& chunk) { return table::unpack(chunk.metadata, chunk.data.data()); }

namespace {

/// The packed tables that `chunks` hold.
/// @throws InvalidArgument if a chunk is not in HOST memory.
std::vector<table::PackedTableView> views_of(std::span<shuffle::PackedData const> chunks) {
    std::vector<table::PackedTableView> views;
    views.reserve(chunks.size());
    for (auto const& chunk : chunks) {
        views.push_back({chunk.metadata, chunk.data.data()});
    }
    return views;
}

}  // namespace

table::Table unpack(std::span<shuffle::PackedData const> chunks) {
    return table::unpack_concatenated(views_of(chunks));
}

}  // namespace spillway::table_shuffle
