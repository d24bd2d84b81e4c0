#pragma once
/// @file
/// A request for HOST memory that waits in the caller's own way: one attempt
/// at a time, counted as waiting in between.

#include <chrono>
#include <cstddef>
#include <cstdint>

#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/memory_reservation.hpp>

namespace spillway::memory {

/// `reserve_or_wait` taken apart for callers that wait in their own way, a
/// coroutine that must not hold its thread, say: `try_reserve` is one
/// attempt that never waits for memory, and between attempts the request's
/// bytes count in `memory_waiting()`, so that the periodic spill thread
/// spills for them. The caller waits as it likes between attempts and calls
/// `check_progress` to learn when to give up.
///
/// Thread safety: one object is used by one thread at a time (a coroutine's
/// calls may come from different threads); different objects may be used
/// concurrently.
class HostAdmission {
  public:
    /// A request for `size` bytes of HOST of `resource`, counted as waiting.
    /// Requires: `resource` outlives the object.
    /// @throws OutOfMemory if `size` is more than the HOST limit.
    HostAdmission(BufferResource& resource, std::size_t size);
    /// Stops counting the request as waiting.
    ~HostAdmission();
    HostAdmission(HostAdmission const&) = delete;
    HostAdmission& operator=(HostAdmission const&) = delete;

    /// Reserves the bytes if HOST has room for them after spilling as
    /// `reserve_and_spill` does; otherwise returns an empty reservation and
    /// holds nothing. A request for 0 bytes succeeds at once, with an empty
    /// reservation. Once it succeeds the request no longer counts as
    /// waiting, and it must not be called again.
    /// @throws InvalidArgument if it needs to spill and is called from inside
    ///         a spill function.
    /// @throws whatever a spill function throws (nothing stays reserved).
    [[nodiscard]] MemoryReservation try_reserve();

    /// Whether the request may wait on: returns if it may.
    /// @throws OutOfMemory, as `reserve_or_wait` does, if no HOST memory was
    ///         freed or spilled (failed attempts, this request's or others',
    ///         give their bytes back, which is not progress) for
    ///         `MemoryConfig::reserve_timeout` since the object was made or
    ///         last saw memory freed.
    void check_progress();

  private:
    /// Counts the request's bytes in the resource's waiting bytes, or stops
    /// counting them.
    void count_waiting(bool waiting) noexcept;

    BufferResource& resource_;
    std::size_t const size_;
    bool waiting_ = false;                ///< counted in `memory_waiting()`
    std::uint64_t freed_;                 ///< the resource's freed bytes at the last progress
    std::chrono::steady_clock::time_point progressed_;  ///< when progress was last seen
};

}  // namespace spillway::memory
