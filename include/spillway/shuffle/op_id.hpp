#pragma once
/// @file
/// The identifier that keeps concurrent collectives on one communicator apart.

#include <cstdint>

#include <spillway/comm/message.hpp>

namespace spillway::shuffle {

/// Names one collective operation on a communicator. Every rank constructs its
/// part of the operation with the same op id.
///
/// Each op id owns two tags of the communicator: `2 * op_id` for a `Shuffler`
/// and `2 * op_id + 1` for an `AllGather`, so a shuffler and an all-gather may
/// share an op id, and collectives with different op ids never see each
/// other's messages. `comm::max_tag` itself stays free for the application.
///
/// At most one `Shuffler` and one `AllGather` per op id may be alive on one
/// communicator object at a time (constructing a second throws
/// `InvalidArgument`). Once a collective object is destroyed its op id may be
/// used again at once, even while other ranks still run the old operation: a
/// rank stops listening to a peer after that peer's last message of the
/// operation, so the new operation's messages, which follow it on the same
/// tag, are left for the new object.
using OpId = std::uint16_t;

/// The largest op id: `2 * max_op_id + 1` is the last tag below `comm::max_tag`.
inline constexpr OpId max_op_id = static_cast<OpId>(comm::max_tag / 2 - 1);

}  // namespace spillway::shuffle
