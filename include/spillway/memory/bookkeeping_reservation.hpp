#pragma once
/// @file
/// HOST bytes reserved in steps to count the memory a caller keeps outside
/// its buffers.

#include <cstddef>
#include <vector>

#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/memory_reservation.hpp>

namespace spillway::memory {

/// Counts, in a resource's HOST tier, memory that a caller holds outside any
/// buffer of it and that grows with its data: index nodes, small vectors,
/// the metadata of chunks it keeps. The caller says how many bytes it holds
/// (`cover`), and the reservation follows in steps of `step_bytes`, keeping
/// one step of slack before it returns any, so that a count moving back and
/// forth across a step does not reserve and release each time.
///
/// Steps are reserved with overbooking (`AllowOverbooking::yes`): they never
/// spill or wait, so `cover` may run under any lock, and a tier over its
/// limit is brought back by the spilling that its next request makes.
///
/// Thread safety: none; the owner guards it as it guards what it counts.
/// Lifetime: the resource must outlive it.
class BookkeepingReservation {
  public:
    /// The HOST bytes each step reserves.
    static constexpr std::size_t step_bytes = std::size_t{4} << 10;

    /// Reserves nothing until the first `cover`.
    explicit BookkeepingReservation(BufferResource& resource) noexcept : resource_(&resource) {}

    /// Reserves or returns steps so that they cover `bytes`: at least
    /// `bytes`, and at most one step more than that needs, or nothing for 0.
    /// If a step cannot be reserved (only when the tier's total would pass
    /// `max_committed_bytes`, or the vector of steps cannot grow), the count
    /// stays short until the next call.
    void cover(std::size_t bytes) noexcept;

    /// The HOST bytes reserved now.
    [[nodiscard]] std::size_t size() const noexcept { return steps_.size() * step_bytes; }

  private:
    BufferResource* resource_;
    std::vector<MemoryReservation> steps_;
};

}  // namespace spillway::memory
