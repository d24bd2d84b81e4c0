#pragma once
/// @file
/// Tables as messages: packed into one buffer of the pipeline's resource,
/// and unpacked again.

#include <cstdint>

#include <spillway/exec/task.hpp>
#include <spillway/stream/context.hpp>
#include <spillway/stream/message.hpp>
#include <spillway/table/table.hpp>

namespace spillway::stream {

/// A message of sequence number `sequence` holding `table`, packed
/// (`table::pack_into`) into one HOST buffer of `context`'s resource, whose
/// memory is reserved with `reserve_memory` (the coroutine waits for room,
/// never overbooks).
/// @throws InvalidArgument as `table::pack_into`.
/// @throws OutOfMemory, PipelineAborted as `reserve_memory`, which waits until
///         `context` is aborted.
exec::Task<Message> pack_table(Context& context, std::uint64_t sequence, table::Table const& table);

/// The table a `pack_table` message holds. Copies the data; its columns come
/// from the calling thread's current HOST resource
/// (`memory::ScopedHostResource`).
/// @throws CorruptData as `table::unpack`, if the message does not hold a
///         packed table.
/// @throws InvalidArgument if the message's buffer is not in HOST memory, or
///         was moved from.
[[nodiscard]] table::Table unpack_table(Message const& message);

}  // namespace spillway::stream
