#pragma once
/// @file
/// A claim on part of a memory tier's budget, held until it is turned into
/// buffers or released.

#include <cstddef>

#include <spillway/memory/memory_type.hpp>

namespace spillway::memory {

class BufferResource;

/// Whether a reservation may take a tier past its limit.
///
/// `yes` is an explicit choice of the caller: the reservation is granted in
/// full, and the tier stays over its limit until something is spilled or
/// freed (the periodic spill thread does this when it is enabled).
enum class AllowOverbooking : bool { no, yes };

/// A move-only RAII claim on `size()` bytes of one tier of a `BufferResource`.
///
/// Reserved bytes count as used when the resource computes what is available,
/// so two callers cannot both plan on the same free memory. `make_buffer` and
/// `move` turn reserved bytes into buffers; a byte is counted either as
/// reserved or as part of a buffer, never both. Whatever is left is returned
/// to the tier when the reservation is destroyed or assigned over.
///
/// Only a `BufferResource` creates non-empty reservations. A default
/// constructed reservation is empty and belongs to no resource.
///
/// Thread safety: a reservation is a value owned by one thread at a time; it
/// may be moved to another thread. Different reservations of one resource may
/// be used concurrently.
///
/// Lifetime: the resource must outlive its reservations.
class MemoryReservation {
  public:
    /// An empty reservation of no resource.
    MemoryReservation() noexcept = default;
    /// Returns the bytes still reserved to their tier.
    ~MemoryReservation();

    MemoryReservation(MemoryReservation&& other) noexcept;
    /// Returns this reservation's bytes, then takes over `other`'s.
    MemoryReservation& operator=(MemoryReservation&& other) noexcept;
    MemoryReservation(MemoryReservation const&) = delete;
    MemoryReservation& operator=(MemoryReservation const&) = delete;

    /// The bytes still reserved.
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    /// Whether no bytes are reserved; an expected failure of
    /// `BufferResource::try_reserve` returns an empty reservation.
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    /// The tier the bytes are reserved in.
    [[nodiscard]] MemoryType mem_type() const noexcept { return mem_type_; }
    /// The resource the bytes are reserved from, or null for a default
    /// constructed reservation.
    [[nodiscard]] BufferResource* resource() const noexcept { return resource_; }

  private:
    friend class BufferResource;
    MemoryReservation(BufferResource* resource, MemoryType mem_type, std::size_t size) noexcept
        : resource_(resource), mem_type_(mem_type), size_(size) {}

    /// Returns the remaining bytes to the resource and empties the reservation.
    void release() noexcept;

    BufferResource* resource_ = nullptr;
    MemoryType mem_type_ = MemoryType::HOST;
    std::size_t size_ = 0;  ///< bytes counted in the tier's reserved total for this reservation
};

}  // namespace spillway::memory
