#pragma once
/// @file
/// Aligned HOST allocations for buffers and disk-tier staging.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>

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

/// The largest size `allocate_aligned` accepts: rounded up to the alignment
/// it is still at most `PTRDIFF_MAX`, the most bytes one object may span.
inline constexpr std::size_t max_aligned_size =
    static_cast<std::size_t>(PTRDIFF_MAX) / host_buffer_alignment * host_buffer_alignment;

/// `size` rounded up to a multiple of `host_buffer_alignment`.
/// Requires: `size <= max_aligned_size` (larger sizes would wrap around).
constexpr std::uint64_t align_up(std::uint64_t size) noexcept {
    return (size + host_buffer_alignment - 1) / host_buffer_alignment * host_buffer_alignment;
}

/// Whether a block for `size` bytes is mapped: aligned to 4 KiB and padded
/// to `align_up(size)`, ready for direct I/O. True for sizes no block can
/// hold, which `allocate_aligned` rejects.
constexpr bool is_mapped_block(std::uint64_t size) noexcept {
    return size > max_aligned_size || align_up(size) >= min_mapped_bytes;
}

/// What `allocate_block` asks the C library for, for a block of `size` bytes
/// that is not mapped: `size` below 1 KiB, from there on `size` rounded up to
/// a sixteenth of its power of two (at most 6.25% more, as a mapped block's
/// rounding up to 4 KiB is). A freed block then fits the next request of its
/// class exactly, which glibc hands out without searching its heap: a
/// shuffle into 1000 partitions makes hundreds of thousands of buffers of a
/// few KiB, all of different sizes, and `malloc` spent a tenth of the run
/// searching the heap they fragmented.
constexpr std::uint64_t malloc_request(std::uint64_t size) noexcept {
    constexpr std::uint64_t smallest_class = 1024;
    if (size < smallest_class) {
        return size;
    }
    auto const step = std::bit_floor(size) / 16;
    return (size + step - 1) / step * step;
}

/// The bytes a block for `size` bytes (`allocate_block`) occupies: a mapped
/// block's `align_up(size)`, else glibc's chunk for `malloc_request(size)`,
/// that and an 8-byte header in 16-byte steps, at least 32. The largest
/// `uint64_t` for sizes above `max_aligned_size`, which no block can hold.
constexpr std::uint64_t block_capacity(std::uint64_t size) noexcept {
    constexpr std::uint64_t chunk_header = 8;
    constexpr std::uint64_t chunk_step = 16;
    constexpr std::uint64_t smallest_chunk = 32;
    if (size > max_aligned_size) {
        return std::numeric_limits<std::uint64_t>::max();
    }
    if (is_mapped_block(size)) {
        return align_up(size);
    }
    auto const chunk = (malloc_request(size) + chunk_header + chunk_step - 1) / chunk_step * chunk_step;
    return chunk < smallest_chunk ? smallest_chunk : chunk;
}

/// The bytes a container's block for `size` bytes occupies: below
/// `min_mapped_bytes` as `block_capacity`, from there on `align_up(size)`
/// rounded up to the next of 1, 1.25, 1.5 and 1.75 times a power of two.
/// Container storage grows and shrinks by varying sizes (a table's columns
/// differ from chunk to chunk); whole size classes let a freed block go to
/// the next container of a similar size from the pool, instead of the
/// system faulting in and zeroing fresh pages for it, at a cost of at most a
/// quarter more memory, which is counted.
constexpr std::uint64_t container_block_capacity(std::uint64_t size) noexcept {
    auto const capacity = block_capacity(size);
    if (!is_mapped_block(size) || size > max_aligned_size / 2) {
        return capacity;
    }
    auto const power = std::bit_floor(capacity);
    for (std::uint64_t quarters = 4; quarters <= 8; ++quarters) {
        if (power / 4 * quarters >= capacity) {
            return power / 4 * quarters;
        }
    }
    return capacity;  // unreachable: 8 quarters of the power are twice it
}

/// A block for `size` bytes of a buffer or a container, not initialised:
/// `allocate_aligned(size)` if it is mapped (`is_mapped_block`), else
/// `malloc_request(size)` bytes from the C library, aligned to 16 bytes.
/// Null for 0, never null otherwise.
/// @throws OutOfMemory if the system cannot allocate it, or if `size` is
///         above `max_aligned_size`.
HostBytes allocate_block(std::size_t size);

/// Shortens `bytes`, a block of `allocate_block(old_size)`, to a block for
/// `size <= old_size` bytes that keeps the first `size` bytes: in place
/// (`realloc`, or unmapping the tail pages) unless a mapped block becomes too
/// small to stay mapped, which is copied.
/// @throws OutOfMemory if the system cannot shorten or copy it; `bytes` is
///         unchanged.
void shrink_block(HostBytes& bytes, std::size_t old_size, std::size_t size);

/// Makes `block`, a mapped block (`is_mapped_block`) of
/// `block.get_deleter().capacity` bytes, one of `capacity` bytes, keeping
/// the pages it has: a shorter one by unmapping its tail, a longer one by
/// remapping it, which may move it and whose added pages come zeroed. Its
/// first bytes keep their contents. False, with `block` unchanged, if the
/// system refuses.
/// Requires: `capacity` a multiple of `host_buffer_alignment`, at least
/// `min_mapped_bytes`.
bool reshape_mapped_block(HostBytes& block, std::size_t capacity) noexcept;

/// `align_up(size)`, checked: the capacity of a HOST block for `size` bytes.
/// @throws OutOfMemory naming `size` if it is above `max_aligned_size`, so
///         that no allocation can hold it.
std::size_t aligned_capacity(std::size_t size);

/// `align_up(size)` bytes aligned to `host_buffer_alignment` (to a huge page
/// for large sizes, which are advised to use transparent huge pages), mapped
/// on their own from `min_mapped_bytes` on; the bytes from `size` to the end
/// are zeroed, the others are not initialised. Null for 0, never null
/// otherwise.
/// @throws OutOfMemory if the system cannot allocate them, or if `size` is
///         above `max_aligned_size`.
HostBytes allocate_aligned(std::size_t size);

}  // namespace spillway::memory::detail
