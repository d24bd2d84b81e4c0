#pragma once
/// @file
/// The unit the collectives move between ranks: metadata bytes and one buffer.

#include <cstddef>
#include <vector>

#include <spillway/comm/message.hpp>
#include <spillway/memory/buffer.hpp>

namespace spillway::shuffle {

/// The most metadata bytes one chunk may carry: the communicator's limit less
/// the 24-byte header the collectives put in front of it.
inline constexpr std::size_t max_packed_metadata_size = comm::max_metadata_size - 24;

/// One chunk of data as the collectives move it: a small description
/// (`metadata`) and the bulk bytes (`data`), which may have 0 bytes.
///
/// The collectives never look inside either part. The table layer produces
/// them: `table_shuffle::hash_partition_and_pack` packs each partition of a table
/// into one, and `table_shuffle::unpack(chunk)` reads it back.
///
/// `data` is a buffer of the collective's `BufferResource`, in any tier when
/// inserted; the collectives hold it spillable while it waits and hand it back
/// in HOST memory. `metadata` (at most `max_packed_metadata_size` bytes) lives
/// outside every resource, so keep it small and put bulk bytes in `data`. For
/// a HOST chunk under 64 KiB with metadata of at most 65,535 bytes, the
/// collectives copy the metadata to the end of a copy of the buffer while the
/// chunk waits (when HOST has room for the copy), so that it is counted and
/// spilled with the data, and split them again when the chunk is handed back.
///
/// Thread safety: a value owned by one thread at a time; move-only, because
/// the buffer is.
struct PackedData {
    std::vector<std::byte> metadata;
    memory::Buffer data;
};

}  // namespace spillway::shuffle
