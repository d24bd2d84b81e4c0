#pragma once
/// @file
/// Aligned HOST allocations for buffers and disk-tier staging.

#include <cstddef>
#include <cstdint>

#include <spillway/memory/buffer.hpp>

namespace spillway::memory::detail {

/// The size of a transparent huge page on x86-64 and arm64 (4 KiB base
/// pages). Allocations at least this large are aligned to it and advised to
/// use huge pages: filling and freeing a 64 MiB buffer then costs about a
/// fifth and a fiftieth of what 4 KiB pages cost (measured on the benchmark
/// machine), and freeing is part of every spill.
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

/// The largest size `allocate_aligned` accepts: rounded up to the alignment
/// it is still at most `PTRDIFF_MAX`, the most bytes one object may span.
inline constexpr std::size_t max_aligned_size =
    static_cast<std::size_t>(PTRDIFF_MAX) / host_buffer_alignment * host_buffer_alignment;

/// `size` rounded up to a multiple of `host_buffer_alignment`.
/// Requires: `size <= max_aligned_size` (larger sizes would wrap around).
constexpr std::uint64_t align_up(std::uint64_t size) noexcept {
    return (size + host_buffer_alignment - 1) / host_buffer_alignment * host_buffer_alignment;
}

/// `align_up(size)`, checked: the capacity of a HOST block for `size` bytes.
/// @throws OutOfMemory naming `size` if it is above `max_aligned_size`, so
///         that no allocation can hold it.
std::size_t aligned_capacity(std::size_t size);

/// `align_up(size)` bytes aligned to `host_buffer_alignment` (to a huge page
/// for large sizes, which are advised to use transparent huge pages); the
/// bytes from `size` to the end are zeroed, the others are not initialised.
/// Null for 0, never null otherwise.
/// @throws OutOfMemory if the system cannot allocate them, or if `size` is
///         above `max_aligned_size`.
HostBytes allocate_aligned(std::size_t size);

}  // namespace spillway::memory::detail
