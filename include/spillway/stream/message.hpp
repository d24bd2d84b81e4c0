#pragma once
/// @file
/// `Message`: what flows through the channels of a streaming pipeline.

#include <cstdint>

#include <spillway/shuffle/packed_data.hpp>

namespace spillway::stream {

/// One unit of data between two actors: a sequence number and a payload.
///
/// `sequence` orders the messages of one stream: a producer numbers its
/// messages in non-decreasing order, not necessarily without gaps, giving
/// equal numbers to messages that belong together (the chunks of one
/// partition, say); `linearise` merges several such streams back into one
/// order.
///
/// The payload is small metadata and one buffer (`shuffle::PackedData`); the
/// buffer must belong to the `BufferResource` of the pipeline's `Context`,
/// in any tier, and may have 0 bytes. `pack_table` makes a message of a
/// table. While a message waits in a channel its buffer is spillable; a
/// receive hands it back in HOST memory.
///
/// Thread safety: a value owned by one thread at a time; move-only.
struct Message {
    std::uint64_t sequence = 0;
    shuffle::PackedData payload;
};

}  // namespace spillway::stream
