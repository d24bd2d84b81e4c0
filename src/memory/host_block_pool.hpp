#pragma once
/// @file
/// The HOST blocks a buffer resource keeps after their buffers are freed, to
/// hand them to later buffers of the same size.

#include <cstddef>
#include <cstdint>
#include <map>

#include <spillway/memory/buffer.hpp>

#include "memory/aligned_allocation.hpp"

namespace spillway::memory::detail {

/// Free HOST blocks of one resource, by capacity (`align_up` of a buffer's
/// size).
///
/// A block of `min_mapped_bytes` or more is mapped on its own and unmapped
/// when freed (`allocate_aligned`), and then the next buffer of that size has
/// the kernel fault in and zero every page again. A shuffle that spills frees
/// and makes such buffers all the time: on the benchmark machine, zeroing
/// fresh pages took a third of the CPU time of an out-of-core shuffle of
/// 4 MiB chunks, and one of 1 MiB chunks took three times as long with those
/// left to glibc's mapping and unmapping as with them pooled. A pooled block
/// is reused as it is; only the padding after the new buffer's size is zeroed.
///
/// Only blocks of at least `min_block_bytes` are pooled; smaller ones come
/// from the C library, which reuses them well. A block of another capacity
/// than a buffer needs is reshaped to it (`fit`), keeping the pages it has:
/// buffers of packed chunks and table columns seldom repeat a size, and under
/// memory pressure the pool has little room to keep many sizes (the page
/// faults this saves: docs/architecture.md). A buffer still holds no more
/// memory than its size rounded up to 4 KiB, as without the pool.
///
/// Under AddressSanitizer, pooled blocks are poisoned, so that a use of a
/// freed buffer's bytes is reported as it would be without the pool.
///
/// The pool does not decide how much it may hold: its owner passes the room
/// it has (`give`, `trim`). Blocks it lets go are handed back to the caller,
/// which frees them once it has dropped its lock.
///
/// Thread safety: none; the owner guards the pool with its own lock.
class HostBlockPool {
  public:
    /// Blocks are pooled from this capacity on: the blocks the resource maps
    /// on its own, whose every page the system would otherwise fault in and
    /// zero again.
    static constexpr std::size_t min_block_bytes = min_mapped_bytes;

    /// Free blocks, by capacity; also what `trim` hands back.
    using Blocks = std::multimap<std::size_t, HostBytes>;

    HostBlockPool() = default;
    /// Frees the pooled blocks.
    ~HostBlockPool();
    HostBlockPool(HostBlockPool const&) = delete;
    HostBlockPool& operator=(HostBlockPool const&) = delete;

    /// The pooled block nearest to `capacity` bytes, to be made one of them
    /// with `fit`: one of that capacity if there is one, else the smallest
    /// larger one, else the largest; null if the pool is empty. Its capacity
    /// is its deleter's. Of a block at least `min_block_bytes` larger, only
    /// the first `capacity` bytes are taken: the rest, pages and all, stays
    /// pooled as a block of its own.
    [[nodiscard]] HostBytes take(std::size_t capacity) noexcept;

    /// Makes `block`, from `take`, a block of `capacity` bytes for a buffer of
    /// `size`: reshaped (`reshape_mapped_block`) if its capacity differs,
    /// with its bytes from `size` to `capacity` zeroed. Reshaping is a system
    /// call: call this without the owner's lock. False, with `block`
    /// unchanged, if the system refuses to reshape it.
    [[nodiscard]] static bool fit(HostBytes& block, std::size_t size, std::size_t capacity) noexcept;

    /// Keeps `block`, of `capacity` bytes, if it is large enough to pool and
    /// the pool then holds at most `room` bytes; returns it (to be freed)
    /// otherwise, also when keeping it would need memory that is not there.
    [[nodiscard]] HostBytes give(HostBytes block, std::size_t capacity, std::uint64_t room) noexcept;

    /// Removes blocks until the pool holds at most `room` bytes, each the
    /// smallest that is enough, else the largest, so that as few bytes go as
    /// can; returns them, to be freed.
    [[nodiscard]] Blocks trim(std::uint64_t room) noexcept;

    /// The bytes of the blocks the pool holds.
    [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }

  private:
    /// The smallest pooled block of at least `bytes`, else the largest: the
    /// one `take` reshapes least, and the one `trim` frees fewest bytes with.
    /// Requires: the pool is not empty.
    [[nodiscard]] Blocks::iterator nearest(std::uint64_t bytes) noexcept;
    /// Takes `block` out of the pool, unpoisoned.
    [[nodiscard]] Blocks::node_type remove(Blocks::iterator block) noexcept;

    Blocks blocks_;
    std::uint64_t bytes_ = 0;  ///< the sum of the keys of `blocks_`
};

}  // namespace spillway::memory::detail
