#pragma once
/// @file
/// Admission of HOST memory for coroutines: a request that waits for room
/// without holding its thread.

#include <cstddef>
#include <stop_token>

#include <spillway/exec/executor.hpp>
#include <spillway/exec/task.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/memory_reservation.hpp>

namespace spillway::stream {

/// The coroutine form of `BufferResource::reserve_or_wait`: reserves `size`
/// bytes of HOST of `resource` within its limit, spilling for them first.
/// While HOST has no room, the coroutine sleeps on `executor` between
/// attempts (from 50 µs, doubling up to 2 ms) instead of blocking its
/// thread, so the work that frees the memory can run on the same threads;
/// meanwhile its bytes count in `resource.memory_waiting()`, and the
/// periodic spill thread spills for them. It never overbooks. A request of
/// 0 bytes gets a reservation of `resource` at once, as `make_buffer` of an
/// empty buffer needs, however full HOST is.
///
/// Progress, not wall time, bounds the wait, as for `reserve_or_wait`
/// (`memory::HostAdmission`); a request of `stop` ends it before its next
/// attempt, within one pause (a pipeline's `Context::abort_token`: the memory
/// it waits for may never be freed once another actor failed, and what it
/// would spill for is of no use).
/// @throws OutOfMemory at once if `size` is more than the HOST limit, or once
///         `MemoryConfig::reserve_timeout` passes with no HOST memory freed,
///         naming what holds it and the options to change.
/// @throws PipelineAborted if `stop` is requested before it has the memory
///         (a request of 0 bytes has it at once); nothing stays reserved.
/// @throws InvalidArgument if it needs to spill and runs inside a spill
///         function.
/// @throws whatever a spill function throws (nothing stays reserved).
exec::Task<memory::MemoryReservation> reserve_memory(
    memory::BufferResource& resource, exec::Executor& executor, std::size_t size, std::stop_token stop = {}
);

}  // namespace spillway::stream
