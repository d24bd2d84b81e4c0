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

/// Allocations of at least this many bytes are mapped from the system on
/// their own and unmapped when freed. The C library would map them too at
/// first, but glibc raises its threshold for mapping to the size of each
/// mapped block freed, up to 32 MiB; after that it carves such blocks out of
/// its heaps, whose freed memory it keeps, so a process that has made and
/// freed many buffers holds far more than its buffers do. Smaller blocks are
/// left to the C library, which reuses them well.
inline constexpr std::size_t min_mapped_bytes = std::size_t{64} << 10;

/// `size` rounded up to a multiple of `host_buffer_alignment`.
constexpr std::uint64_t align_up(std::uint64_t size) noexcept {
    return (size + host_buffer_alignment - 1) / host_buffer_alignment * host_buffer_alignment;
}

/// `align_up(size)` bytes aligned to `host_buffer_alignment` (to a huge page
/// for large sizes, which are advised to use transparent huge pages), mapped
/// on their own from `min_mapped_bytes` on; the bytes from `size` to the end
/// are zeroed, the others are not initialised. Null for 0.
/// @throws OutOfMemory if the system cannot allocate them.
HostBytes allocate_aligned(std::size_t size);

}  // namespace spillway::memory::detail
