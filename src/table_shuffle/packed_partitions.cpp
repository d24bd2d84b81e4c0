#include <spillway/table_shuffle/packed_partitions.hpp>

#include <spillway/table/hash_partition.hpp>
#include <spillway/table/packed_table.hpp>

namespace spillway::table_shuffle {

std::unordered_map<shuffle::PartitionId, shuffle::PackedData> hash_partition_and_pack(
    table::Table const& table, std::span<std::size_t const> key_columns, shuffle::PartitionId partitions,
    memory::BufferResource& resource, memory::AllowOverbooking overbooking) {
    auto const pieces = table::hash_partition(table, key_columns, partitions);
    std::unordered_map<shuffle::PartitionId, shuffle::PackedData> chunks;
    for (shuffle::PartitionId partition = 0; partition < partitions; ++partition) {
        auto const& piece = pieces[partition];
        if (piece.num_rows() == 0) {
            continue;
        }
        auto const size = table::packed_size(piece);
        auto reservation = overbooking == memory::AllowOverbooking::no
                               ? resource.reserve_or_wait(size)
                               : resource.reserve_and_spill(memory::MemoryType::HOST, size, overbooking);
        auto buffer = resource.make_buffer(size, reservation);
        auto metadata = table::pack_into(piece, buffer.data());
        chunks.emplace(partition, shuffle::PackedData{std::move(metadata), std::move(buffer)});
    }
    return chunks;
}

table::Table unpack(shuffle::PackedData const& chunk) { return table::unpack(chunk.metadata, chunk.data.data()); }

}  // namespace spillway::table_shuffle
