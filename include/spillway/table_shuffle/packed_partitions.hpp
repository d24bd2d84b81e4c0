#pragma once
/// @file
/// Tables as the chunks a `shuffle::Shuffler` moves: hash-partitioned and
/// packed into buffers of a `BufferResource`, and unpacked again.

#include <cstddef>
#include <span>
#include <unordered_map>

#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/memory_reservation.hpp>
#include <spillway/shuffle/packed_data.hpp>
#include <spillway/shuffle/partition_owner.hpp>
#include <spillway/table/packed_split.hpp>
#include <spillway/table/table.hpp>

namespace spillway::table_shuffle {

/// `table` split into `partitions` pieces by the hash of its `key_columns`
/// (`hash_partition`), each non-empty piece packed (`pack_into`) into a HOST
/// buffer of `resource`, straight from `table` (`table::PackedSplit`). The
/// pieces are reserved together, and the reservation spills other data to
/// make room rather than exceed the limit: with `overbooking` `no` it is made
/// with `reserve_or_wait`, which also waits for memory that others free; with
/// `yes`, with `reserve_and_spill`, which overbooks instead. Empty partitions
/// are left out. The result is what `Shuffler::insert` takes.
/// @throws InvalidArgument as `hash_partition` and `pack_into` do.
/// @throws OutOfMemory if `overbooking` is `no` and the pieces together are
///         larger than the HOST limit, or no memory was freed for them within
///         `memory_reserve_timeout`.
[[nodiscard]] std::unordered_map<shuffle::PartitionId, shuffle::PackedData> hash_partition_and_pack(
    table::Table const& table, std::span<std::size_t const> key_columns, shuffle::PartitionId partitions,
    memory::BufferResource& resource, memory::AllowOverbooking overbooking = memory::AllowOverbooking::no);

/// The bytes the non-empty pieces of `split` take packed: what `pack_pieces`
/// needs reserved.
[[nodiscard]] std::size_t packed_pieces_size(table::PackedSplit const& split) noexcept;

/// Each non-empty piece of `split` packed into a HOST buffer of `resource`,
/// paid from `reservation`: the second half of `hash_partition_and_pack`,
/// for callers that reserve the memory in their own way (a coroutine that
/// waits for it, say). Empty partitions are left out.
/// @throws ReservationError if `reservation` is not a HOST reservation of
///         `resource` holding at least `packed_pieces_size(split)`.
[[nodiscard]] std::unordered_map<shuffle::PartitionId, shuffle::PackedData> pack_pieces(
    table::PackedSplit const& split, memory::BufferResource& resource, memory::MemoryReservation& reservation
);

/// The table that `chunk` holds, packed by `pack_into` (as
/// `hash_partition_and_pack` packs them). Copies the data.
/// @throws InvalidArgument if `chunk.data` is not in HOST memory (`Buffer::data`).
/// @throws CorruptData as `unpack(metadata, payload)` does.
[[nodiscard]] table::Table unpack(shuffle::PackedData const& chunk);

/// The tables that `chunks` hold, packed as `unpack` reads them,
/// concatenated in their order (`table::unpack_concatenated`): one table,
/// whose column buffers are made once, however many chunks there are. A
/// shuffle into many partitions hands out many small chunks; unpacking them
/// together costs about what unpacking one large chunk does.
/// @throws InvalidArgument if a chunk is not in HOST memory, or the chunks'
///         schemas differ.
/// @throws CorruptData as `table::unpack_concatenated` does.
[[nodiscard]] table::Table unpack(std::span<shuffle::PackedData const> chunks);

}  // namespace spillway::table_shuffle
