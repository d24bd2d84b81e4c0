#pragma once
/// @file
/// How a message is addressed (ranks and tags) and what a receiver gets.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <spillway/memory/buffer.hpp>

namespace spillway::comm {

/// A rank: the index of one participant of a communicator, in `[0, nranks)`.
using Rank = std::int32_t;

/// Stands for "from any rank" where a source rank is expected.
inline constexpr Rank any_source = -1;

/// A message tag. Valid tags are `[0, max_tag]`. Tags partition the message
/// space: `Communicator::probe` only ever returns messages of the tag it is
/// given, so independent users of one communicator (several shuffles with
/// different op ids) each take a disjoint set of tags and never see each
/// other's messages.
using Tag = std::int32_t;

/// The largest valid tag, the same for every backend. The MPI backend uses
/// two MPI tags per tag, and MPI guarantees tags up to 32767, so 2^14 - 1.
inline constexpr Tag max_tag = (1 << 14) - 1;

/// The most metadata bytes one message may carry. Metadata is held outside
/// every `BufferResource` (it is received before the receiver has reserved
/// anything), so it is meant for descriptions, not data: put bulk data in
/// the payload.
inline constexpr std::size_t max_metadata_size = std::size_t{16} << 20;

/// A received message.
struct Message {
    Rank source = 0;                      ///< the rank that sent it
    Tag tag = 0;                          ///< the tag it was sent with
    std::vector<std::byte> metadata;      ///< the sender's metadata bytes, unchanged
    /// The payload, in a HOST buffer of the receiver's `BufferResource`; empty
    /// when the sender sent none. A payload of 0 bytes arrives as a buffer of
    /// size 0.
    std::optional<memory::Buffer> payload;
};

}  // namespace spillway::comm
