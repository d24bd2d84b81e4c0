#pragma once
/// @file
/// A block of bytes in one memory tier, created and accounted by a
/// `BufferResource`.

#include <cstddef>
#include <memory>
#include <span>

#include <spillway/memory/memory_type.hpp>

namespace spillway::memory {

class BufferResource;

/// The alignment, in bytes, of a HOST buffer's data from 64 KiB on, and the
/// granularity its allocation is rounded up to, so that the disk tier can
/// read and write it with direct I/O (`O_DIRECT`) without copying. A smaller
/// buffer comes from the C library, aligned to 16 bytes, and is copied
/// through an aligned block when it is spilled or read back.
inline constexpr std::size_t host_buffer_alignment = 4096;

namespace detail {
class SpillSlot;

/// Frees the block of a HOST buffer or container: unmaps it when the
/// resource mapped it (a capacity of 64 KiB or more), else gives it back to
/// the C library.
struct AlignedFree {
    std::size_t capacity = 0;  ///< the bytes the block occupies
    void operator()(std::byte* bytes) const noexcept;
};

/// Owns an aligned HOST allocation.
using HostBytes = std::unique_ptr<std::byte[], AlignedFree>;
}  // namespace detail

/// `size()` bytes in one tier: HOST memory the caller reads and writes, or a
/// spill file on DISK that must be moved back to HOST before it is read.
///
/// Only a `BufferResource` creates buffers (`make_buffer`, `move`,
/// `move_to_disk`), and each buffer's bytes are counted in its tier's usage
/// until the buffer is destroyed. A moved-from buffer is empty: size 0, and
/// only assignment and destruction are meaningful.
///
/// Thread safety: a buffer is a value owned by one thread at a time; it may be
/// moved between threads. Concurrent reads of `data()` are safe; writes need
/// the caller's own synchronisation.
///
/// Lifetime: the resource must outlive its buffers.
class Buffer {
  public:
    /// Returns the bytes to the tier (and a DISK buffer's spill file to the disk tier).
    ~Buffer();
    Buffer(Buffer&& other) noexcept;
    /// Frees this buffer's bytes, then takes over `other`'s.
    Buffer& operator=(Buffer&& other) noexcept;
    Buffer(Buffer const&) = delete;
    Buffer& operator=(Buffer const&) = delete;

    /// The tier the bytes are in.
    [[nodiscard]] MemoryType mem_type() const noexcept { return mem_type_; }
    /// The number of bytes the buffer holds, in any tier.
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    /// The resource that made the buffer and accounts for it; null once moved from.
    [[nodiscard]] BufferResource* resource() const noexcept { return resource_; }

    /// The bytes, aligned as `host_buffer_alignment` says. Valid until the buffer
    /// is destroyed, assigned, moved or truncated (`BufferResource::truncate`).
    /// @throws InvalidArgument if the buffer is not in HOST memory; move it
    ///         there with `BufferResource::move` first.
    [[nodiscard]] std::span<std::byte> data();
    /// Read-only access to the bytes; same contract as the non-const overload.
    [[nodiscard]] std::span<std::byte const> data() const;

  private:
    friend class BufferResource;
    /// A HOST buffer over `bytes`, a block for `size` bytes.
    Buffer(BufferResource& resource, std::size_t size, detail::HostBytes bytes) noexcept;
    /// A DISK buffer kept in `slot`.
    Buffer(BufferResource& resource, std::size_t size, std::unique_ptr<detail::SpillSlot> slot) noexcept;

    /// @throws InvalidArgument naming `what` unless the buffer is in HOST memory.
    void check_host(char const* what) const;

    /// Frees the bytes, returns them to the resource's accounting and empties
    /// the buffer.
    void release() noexcept;

    BufferResource* resource_;  ///< null once moved from
    MemoryType mem_type_;
    std::size_t size_;
    detail::HostBytes host_;                   ///< the bytes of a HOST buffer, else null
    std::unique_ptr<detail::SpillSlot> slot_;  ///< where a DISK buffer lies in a spill file, else null
};

}  // namespace spillway::memory
