#pragma once
/// @file
/// The owner of every buffer: tier limits, reservations, and the accounting
/// of every byte.

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include <spillway/core/mutex.hpp>
#include <spillway/core/options.hpp>
#include <spillway/core/statistics.hpp>
#include <spillway/memory/buffer.hpp>
#include <spillway/memory/memory_config.hpp>
#include <spillway/memory/memory_reservation.hpp>
#include <spillway/memory/memory_type.hpp>
#include <spillway/memory/spill_manager.hpp>

namespace spillway::memory {

namespace detail {
class DiskTier;
class HostBlockPool;
}

/// Creates buffers and accounts for every byte of them, per tier.
///
/// Each tier has a limit. A tier's bytes are either *used* (held by buffers)
/// or *reserved* (held by reservations not yet turned into buffers); what is
/// available is the limit minus both, and may be negative when a reservation
/// overbooked the tier or a limit was lowered below what is in use. Every
/// buffer and reservation returns its bytes when it is destroyed, so when the
/// work is done every tier's used and reserved totals are zero again.
///
/// The DISK tier keeps each buffer in a spill file of its own, in a directory
/// of this resource's (see `spill_directory()` and docs/spill_format.md).
///
/// A freed HOST buffer of 64 KiB or more leaves its block with the resource,
/// and a later buffer takes it over, shortened or lengthened to the buffer's
/// size rounded up to 4 KiB, so that the system does not fault in and zero
/// fresh pages for it. Pooled blocks are not used bytes, but the resource
/// keeps only as many as fit beside its buffers and reservations within the
/// HOST limit, and frees the others whenever a HOST block is allocated:
/// buffers, reservations and pooled blocks together then claim no more HOST
/// memory than the limit, or than the first two alone when they overbook it.
/// (Until the next allocation, a new reservation may count room that pooled
/// blocks still hold.)
/// `release_pooled_memory` frees them; `MemoryConfig::pool_host_blocks` turns
/// pooling off.
///
/// Statistics recorded (names in `statistics()`):
/// - `memory.allocate.bytes`: each HOST allocation; `memory.host.blocks_reused`:
///   each one that took over a pooled block.
/// - `memory.copy.host_to_disk.bytes` / `.seconds`, `memory.copy.disk_to_host.bytes` /
///   `.seconds`: each `move` between tiers.
/// - `memory.disk.write.bytes`, `memory.disk.read.bytes`: spill-file bytes written and
///   read; `memory.disk.direct_io_fallbacks`, `memory.disk.stale_directories_removed`.
///
/// Thread safety: every member function may be called concurrently.
/// Accounting takes one short internal lock (`accounting_mutex_`), a leaf in
/// the lock order of docs/architecture.md.
///
/// Lifetime: the resource must outlive every buffer and reservation it made;
/// destroying it while any is alive terminates the process with a message.
class BufferResource {
  public:
    /// The most bytes one tier may hold used and reserved together, whatever
    /// its limit and even when overbooking, so that `memory_available` can
    /// always be computed: a request that would pass it fails.
    static constexpr std::uint64_t max_committed_bytes = INT64_MAX;

    /// A resource configured by `config`, recording into `statistics` (a new
    /// one if null), which the caller may share with other modules. Makes
    /// its spill directory under `config.spill_directory`, after removing the
    /// directories there of processes that no longer run.
    /// @throws InvalidArgument if `config` is invalid (empty spill directory).
    /// @throws IoError naming the path if the spill directory cannot be made.
    explicit BufferResource(
        MemoryConfig config = {},
        std::shared_ptr<Statistics> statistics = std::make_shared<Statistics>()
    );
    /// Removes the spill directory.
    /// Requires: no buffer or reservation of this resource is alive; aborts
    /// with a message naming the tier otherwise.
    ~BufferResource();
    BufferResource(BufferResource const&) = delete;
    BufferResource& operator=(BufferResource const&) = delete;

    /// The limit of `tier` in bytes.
    [[nodiscard]] std::uint64_t memory_limit(MemoryType tier) const;
    /// Changes the limit of `tier`; a percentage is resolved as in
    /// `MemoryConfig`. Takes effect for every later reservation; buffers and
    /// reservations already made are kept even if the new limit is below them.
    /// Pooled HOST blocks that no longer fit within the limit are freed. A
    /// limit above `max_committed_bytes` acts as `max_committed_bytes`.
    void set_memory_limit(MemoryType tier, SizeSpec limit);

    /// The limit of `tier` (at most `max_committed_bytes`) minus its used and
    /// reserved bytes. Negative when the tier is over its limit; never
    /// overflows, since neither term passes `max_committed_bytes`.
    [[nodiscard]] std::int64_t memory_available(MemoryType tier) const;
    /// The bytes of `tier` held by buffers.
    [[nodiscard]] std::uint64_t memory_used(MemoryType tier) const;
    /// The bytes of `tier` held by reservations and not yet by buffers.
    [[nodiscard]] std::uint64_t memory_reserved(MemoryType tier) const;
    /// The largest value `memory_used(tier)` has had.
    [[nodiscard]] std::uint64_t peak_memory_used(MemoryType tier) const;
    /// The bytes of the HOST blocks kept for reuse after their buffers were
    /// freed; not counted in `memory_used(HOST)`.
    [[nodiscard]] std::uint64_t memory_pooled() const;
    /// Frees every HOST block kept for reuse, returning its memory to the
    /// system.
    void release_pooled_memory();

    /// Reserves `size` bytes of `tier`. With `AllowOverbooking::yes` the
    /// reservation is granted even past the limit, but never past
    /// `max_committed_bytes`.
    /// @throws OutOfMemory naming the limit and its option if the tier has
    ///         less than `size` bytes available and overbooking is not allowed.
    /// @throws OutOfMemory naming `size` if the tier's used and reserved bytes
    ///         would pass `max_committed_bytes`, even with overbooking.
    [[nodiscard]] MemoryReservation reserve(
        MemoryType tier, std::size_t size, AllowOverbooking allow_overbooking
    );

    /// Reserves `size` bytes of `tier` if that many are available. Returns
    /// the reservation, or an empty one when the bytes are not available (an
    /// expected outcome, not an error), which includes every `size` that would
    /// take the tier past `max_committed_bytes`. A request for 0 bytes always succeeds
    /// with an empty reservation, so compare `size()` with the request.
    [[nodiscard]] MemoryReservation try_reserve(MemoryType tier, std::size_t size);

    /// Reserves `size` bytes of `tier`, spilling to make room if needed.
    ///
    /// The bytes are reserved first (overbooking if need be), so that
    /// concurrent callers see each other's needs; then, if HOST is over its
    /// limit, the spill manager spills the excess as
    /// `spill_to_make_headroom(0)` does, this caller claiming at most `size`
    /// bytes of it at a time so that concurrent callers spill in parallel.
    /// If HOST is still over its limit after that, the reservation is kept
    /// only with `AllowOverbooking::yes`. Spilling frees HOST memory only, so
    /// for another tier this is `reserve`. A request for 0 bytes returns an
    /// empty reservation at once, however full HOST is.
    ///
    /// Blocks while spill functions run (on this thread or others).
    /// @throws OutOfMemory naming the limit, its option and what was spilled
    ///         if the tier stays over its limit and overbooking is not allowed.
    /// @throws OutOfMemory naming `size`, before any spilling, if the tier's
    ///         used and reserved bytes would pass `max_committed_bytes`, even
    ///         with overbooking.
    /// @throws InvalidArgument if it needs to spill and is called from inside
    ///         a spill function of any resource's manager.
    /// @throws whatever a spill function throws (the reservation is returned).
    [[nodiscard]] MemoryReservation reserve_and_spill(
        MemoryType tier, std::size_t size, AllowOverbooking allow_overbooking
    );

    /// Reserves `size` bytes of HOST within its limit, waiting for room
    /// rather than overbooking: spills as `reserve_and_spill` does and, when
    /// that cannot make enough room, gives its bytes back and waits until
    /// HOST memory is freed or spilled elsewhere, then tries again. While it
    /// waits, its bytes count in `memory_waiting()`, and the spill manager's
    /// periodic thread spills for them as well as for its headroom.
    ///
    /// Progress, not wall time, bounds the wait: it fails only after
    /// `MemoryConfig::reserve_timeout` passed with no HOST memory freed at
    /// all. Waiters are not ordered; each retries when memory is freed. A
    /// request for 0 bytes returns an empty reservation at once.
    ///
    /// Blocks while spill functions run and while it waits.
    /// @throws OutOfMemory at once if `size` is more than the HOST limit, or
    ///         once the timeout passes without progress, naming the limit,
    ///         what is in use (by containers, and by buffers), reserved and
    ///         waiting, and the options to change.
    /// @throws InvalidArgument if it needs to spill and is called from inside
    ///         a spill function.
    /// @throws whatever a spill function throws (nothing stays reserved).
    [[nodiscard]] MemoryReservation reserve_or_wait(std::size_t size);

    /// The HOST bytes that `reserve_or_wait` callers and `HostAdmission`s
    /// are waiting for now.
    [[nodiscard]] std::uint64_t memory_waiting() const;

    /// `buffer`, a HOST buffer of any resource, re-homed into this one
    /// without copying its bytes: they leave the used total of `buffer`'s
    /// resource and join this one's, paid for with `buffer.size()` bytes of
    /// `reservation`. This is how a buffer changes hands between two
    /// resources of one process, e.g. between ranks of the in-process
    /// communicator.
    ///
    /// `buffer` is moved from only on success; on failure it is unchanged.
    /// Takes the two resources' accounting locks one after the other, never
    /// both at once.
    ///
    /// Requires: `buffer` is a HOST buffer that has not been moved from;
    /// `reservation` is a HOST reservation of this resource holding at least
    /// `buffer.size()` bytes.
    /// @throws InvalidArgument if `buffer` is moved from or not in HOST memory.
    /// @throws ReservationError if `reservation` cannot pay for it.
    [[nodiscard]] Buffer adopt(Buffer&& buffer, MemoryReservation& reservation);

    /// A new HOST buffer of `size` bytes, not initialised, made from `size`
    /// bytes of `reservation`. Its block is aligned to `host_buffer_alignment`
    /// and mapped on its own where `size` rounded up to that is 64 KiB or
    /// more, and from the C library, aligned to 16 bytes, where it is less:
    /// small buffers then occupy little more than their size.
    /// `allocated_capacity(size)` is what the block occupies.
    /// Requires: `reservation` is a HOST reservation of this resource holding
    /// at least `size` bytes.
    /// @throws ReservationError if it is not.
    /// @throws OutOfMemory if the system cannot allocate the bytes.
    [[nodiscard]] Buffer make_buffer(std::size_t size, MemoryReservation& reservation);

    /// Shortens `buffer`, a HOST buffer of this resource, to its first
    /// `size` bytes and returns the bytes cut off to the HOST tier, so that
    /// a caller that kept a trailer after its data (metadata of its own,
    /// say) drops it without copying the data: a block from the C library is
    /// shortened with `realloc`, and a mapped block that stays 64 KiB or
    /// more unmaps its tail pages. Only a mapped block that becomes smaller
    /// than that is copied, into a block from the C library. Spans taken
    /// from `buffer.data()` before are invalid afterwards.
    /// @throws InvalidArgument if `buffer` is not a HOST buffer of this
    ///         resource, or `size` is above `buffer.size()`.
    /// @throws OutOfMemory if the system cannot shorten or copy the block;
    ///         the buffer is unchanged.
    void truncate(Buffer& buffer, std::size_t size);

    /// `size` bytes of HOST memory for a container's storage (what a
    /// `HostAllocator` asks for), not initialised, in a block like a
    /// buffer's, of `container_capacity(size)` bytes. They count as used at
    /// that capacity until `deallocate_bytes` frees them.
    ///
    /// Room is made as `reserve_and_spill` makes it, and HOST is overbooked
    /// when spilling cannot make enough: a container holds data that code
    /// works on now, which spilling cannot take away, and whoever makes
    /// containers bounds how many are alive (e.g. a `seq_join`'s window).
    ///
    /// Blocks while spill functions run.
    /// @throws OutOfMemory if the system cannot allocate the bytes.
    /// @throws whatever a spill function throws.
    [[nodiscard]] void* allocate_bytes(std::size_t size);
    /// Frees `memory`, which `allocate_bytes(size)` of this resource returned,
    /// and returns its capacity to the HOST tier.
    void deallocate_bytes(void* memory, std::size_t size) noexcept;
    /// The HOST bytes a buffer's block for `size` bytes occupies: `size`
    /// rounded up to 4 KiB where that is 64 KiB or more, else glibc's chunk
    /// for what it asks the C library for (an 8-byte header more, in 16-byte
    /// steps, at least 32): `size` below 1 KiB, from there on `size` rounded
    /// up to a sixteenth of its power of two, so that freed blocks fit later
    /// ones exactly. Either rounding adds at most 6.25%.
    [[nodiscard]] static std::size_t allocated_capacity(std::size_t size) noexcept;
    /// The HOST bytes `allocate_bytes(size)` occupies and counts:
    /// `allocated_capacity(size)` below 64 KiB; from there on that rounded up
    /// to a size class (1, 1.25, 1.5 or 1.75 times a power of two), so that a
    /// freed block is reused by the next container of a similar size.
    [[nodiscard]] static std::size_t container_capacity(std::size_t size) noexcept;

    /// `buffer`'s bytes in the tier of `reservation`, paid for with
    /// `buffer.size()` bytes of it. HOST to DISK writes a spill file with the
    /// configured codec; DISK to HOST reads it back, checks it and removes it.
    /// If the buffer is already in that tier it is returned as it is and the
    /// reservation, checked as for a move, is not drawn on.
    ///
    /// `buffer` is moved from only on success; on failure it is unchanged and
    /// still accounted in its tier (strong guarantee). The I/O runs on the
    /// calling thread and takes no lock of the resource.
    ///
    /// Requires: `buffer` is a buffer of this resource; `reservation` is a
    /// reservation of this resource holding at least `buffer.size()` bytes.
    /// @throws InvalidArgument if `buffer` is empty or of another resource.
    /// @throws ReservationError if `reservation` cannot pay for the move.
    /// @throws IoError naming the spill file if writing or reading fails, or
    ///         the file is missing.
    /// @throws CorruptData naming the spill file if it is truncated or fails
    ///         its checksum.
    /// @throws OutOfMemory if the system cannot allocate HOST memory.
    [[nodiscard]] Buffer move(Buffer&& buffer, MemoryReservation& reservation);

    /// Moves the HOST buffers `buffers` to DISK together, in place, into one
    /// spill file written in a few large requests, paid for with their total
    /// size from `reservation`: many small buffers cost one file instead of
    /// one each. The file's disk is freed once the last of them is
    /// (docs/spill_format.md).
    ///
    /// All or nothing: on failure every buffer is unchanged, in HOST.
    ///
    /// Requires: each buffer is a HOST buffer of this resource; `reservation`
    /// is a DISK reservation of this resource holding their total size.
    /// @throws InvalidArgument if a buffer is empty, of another resource or
    ///         not in HOST.
    /// @throws ReservationError if `reservation` cannot pay for the move.
    /// @throws IoError naming the spill file if writing fails.
    void move_to_disk(std::span<Buffer> buffers, MemoryReservation& reservation);

    /// Moves the DISK buffers `buffers` back to HOST together, in place, paid
    /// for with their total size from `reservation`. Each spill file is
    /// opened once, and payloads that lie next to each other in it, as
    /// `move_to_disk` writes them, come back in one read through the 4 MiB
    /// staging area: buffers spilled together and needed together cost a few
    /// large reads instead of one each. Each is checked as `move` checks it.
    ///
    /// All or nothing: on failure every buffer is unchanged, on DISK.
    ///
    /// Requires: each buffer is a DISK buffer of this resource; `reservation`
    /// is a HOST reservation of this resource holding their total size.
    /// @throws InvalidArgument if a buffer is empty, of another resource or
    ///         not on DISK.
    /// @throws ReservationError if `reservation` cannot pay for the move.
    /// @throws IoError / CorruptData naming the spill file as `move` does.
    /// @throws OutOfMemory if the system cannot allocate HOST memory.
    void move_to_host(std::span<Buffer> buffers, MemoryReservation& reservation);

    /// The directory holding this resource's spill files.
    [[nodiscard]] std::filesystem::path const& spill_directory() const noexcept;

    /// Removes the spill files that hold no buffer. The DISK tier keeps them
    /// for later buffers (as many as its buffers once took together), so a
    /// job done spilling can remove them while it works on rather than at
    /// the end; a later spill makes new ones.
    void remove_free_spill_files() noexcept;

    /// The spill manager whose functions free this resource's HOST memory.
    [[nodiscard]] SpillManager& spill_manager() noexcept { return spill_manager_; }

    /// The configuration the resource was made with (limits as configured,
    /// not as changed by `set_memory_limit`).
    [[nodiscard]] MemoryConfig const& config() const noexcept { return config_; }
    /// Where the resource records its statistics.
    [[nodiscard]] Statistics& statistics() const noexcept { return *statistics_; }

  private:
    friend class Buffer;
    friend class HostAdmission;
    friend class MemoryReservation;
    friend class SpillManager;

    /// Whether HOST bytes belong to a `Buffer` or to a container
    /// (`allocate_bytes`).
    enum class HostUse { buffer, container };

    /// The accounting of one tier. Invariants: `peak_used >= used`;
    /// `used + reserved <= max_committed_bytes`.
    struct Tier {
        std::uint64_t capacity = 0;  ///< what a percentage limit is a percentage of
        std::uint64_t limit = 0;     ///< as set, possibly above max_committed_bytes
        std::uint64_t used = 0;      ///< bytes held by buffers
        std::uint64_t reserved = 0;  ///< bytes held by reservations
        std::uint64_t peak_used = 0;

        /// The bytes held by buffers and reservations.
        [[nodiscard]] std::uint64_t committed() const noexcept { return used + reserved; }
        /// The limit that availability is computed with: at most max_committed_bytes.
        [[nodiscard]] std::uint64_t accounted_limit() const noexcept {
            return limit < max_committed_bytes ? limit : max_committed_bytes;
        }
    };

    /// A HOST reservation and what spilling for it achieved.
    struct SpillingReservation {
        MemoryReservation reservation;
        SpillManager::HeadroomResult headroom;
    };
    /// `size` bytes of HOST reserved, overbooking if need be, and then, if
    /// HOST is over its limit, spilled for as `spill_to_make_headroom(0)`
    /// does, claiming at most `size` at a time: the first step of
    /// `reserve_and_spill` and `reserve_or_wait`. 0 bytes are reached at
    /// once.
    SpillingReservation reserve_spilling(std::size_t size);

    /// Counts `size` HOST bytes as released, and wakes `reserve_or_wait`
    /// callers if any wait.
    void note_host_released(std::size_t size) noexcept SPILLWAY_REQUIRES(accounting_mutex_);

    /// The HOST bytes freed since construction: released, less what failed
    /// attempts gave back (`return_attempt`). Waiting requests measure
    /// progress by it, and the spill manager whether a spill freed anything.
    std::uint64_t host_bytes_freed() const;
    /// Releases `reservation`, which a request for HOST took and could not
    /// keep (spilling did not make room), without counting it as freed:
    /// the waiters it wakes try again, but a request that waits is not kept
    /// from timing out by other waiters' attempts. Empties `reservation`.
    void return_attempt(MemoryReservation& reservation) noexcept;
    /// @throws OutOfMemory if a request that waits for `size` bytes of HOST
    ///         could never be met: `size` is more than the HOST limit.
    void check_within_host_limit(std::size_t size) const;
    /// Throws the `OutOfMemory` of a request for `size` bytes of HOST that
    /// saw nothing freed for `reserve_timeout`.
    [[noreturn]] void fail_waiting(std::size_t size) const;

    /// Called by a reservation that returns `size` unused bytes.
    void release_reservation(MemoryType tier, std::size_t size) noexcept;
    /// Called by a buffer of `size` bytes that is destroyed (or by a
    /// container's storage, `use`), with its HOST bytes if it has them, which
    /// are pooled or freed.
    void release_buffer(MemoryType tier, std::size_t size, detail::HostBytes bytes = {},
                        HostUse use = HostUse::buffer) noexcept;

    /// A HOST block for `size` bytes, `counted` of them taken from
    /// `reservation` (the buffer's size, or a container's whole capacity),
    /// filled by `fill(bytes)`: the bytes are counted as used (`consume`) first, then
    /// taken from the nearest pooled block, reshaped, else newly allocated;
    /// pooled blocks are freed if the pool and the buffers would otherwise
    /// hold more than the limit. Counting the bytes first is what makes
    /// threads that allocate at once leave room for each other. If allocating
    /// or `fill` throws, the bytes go back to `reservation`. `use` says what
    /// will hold them.
    /// @throws OutOfMemory if the system cannot allocate them; what `fill` throws.
    template <typename Fill>
    detail::HostBytes allocate_host(
        MemoryReservation& reservation, std::size_t size, std::size_t counted, Fill fill, HostUse use = HostUse::buffer
    );
    /// The bytes the HOST pool may hold beside the buffers and reservations:
    /// what is left of the limit, or 0 when pooling is off.
    std::uint64_t pool_room() const SPILLWAY_REQUIRES(accounting_mutex_);

    /// @throws ReservationError naming `what` unless `reservation` belongs to
    ///         this resource, is in `tier` and holds at least `size` bytes.
    void check_reservation(
        MemoryReservation const& reservation, MemoryType tier, std::size_t size, char const* what
    ) const;
    /// The accounting of every tier at construction.
    static std::array<Tier, memory_type_count> initial_tiers(
        MemoryConfig const& config, std::filesystem::path const& spill_directory
    );
    /// "limit L (option), U in use and R reserved" for error messages.
    std::string describe_usage(MemoryType type) const;

    /// Turns `size` bytes of `reservation` from reserved into used.
    /// Requires: `check_reservation` passed for them.
    void consume(MemoryReservation& reservation, std::size_t size);
    /// `consume`, under the accounting lock.
    void consume_locked(MemoryReservation& reservation, std::size_t size) SPILLWAY_REQUIRES(accounting_mutex_);
    /// Gives `size` consumed bytes back to `reservation`, for a buffer that
    /// could not be made after all.
    void unconsume(MemoryReservation& reservation, std::size_t size) noexcept;

    Tier& tier(MemoryType type) SPILLWAY_REQUIRES(accounting_mutex_) {
        return tiers_[tier_index(type)];
    }
    Tier const& tier(MemoryType type) const SPILLWAY_REQUIRES(accounting_mutex_) {
        return tiers_[tier_index(type)];
    }

    // Constant after construction.
    MemoryConfig const config_;
    std::shared_ptr<Statistics> const statistics_;
    std::unique_ptr<detail::DiskTier> const disk_;

    /// A leaf lock: nothing is called while it is held.
    mutable Mutex accounting_mutex_;
    std::array<Tier, memory_type_count> tiers_ SPILLWAY_GUARDED_BY(accounting_mutex_);
    /// The HOST bytes released so far by buffers (freed, moved out of HOST or
    /// adopted by another resource) and by reservations; only grows (modulo
    /// 2^64). Waiters wake when it grows.
    std::uint64_t host_released_ SPILLWAY_GUARDED_BY(accounting_mutex_) = 0;
    /// Of `host_released_`, the bytes failed attempts gave back.
    std::uint64_t host_returned_by_attempts_ SPILLWAY_GUARDED_BY(accounting_mutex_) = 0;
    /// The HOST bytes `reserve_or_wait` callers wait for.
    std::uint64_t host_waiting_ SPILLWAY_GUARDED_BY(accounting_mutex_) = 0;
    /// Of HOST's used bytes, those of containers (`allocate_bytes`).
    std::uint64_t host_container_bytes_ SPILLWAY_GUARDED_BY(accounting_mutex_) = 0;
    /// Notified, while anyone waits, whenever HOST bytes are released.
    CondVar host_released_signal_;
    /// Freed HOST blocks kept for reuse.
    std::unique_ptr<detail::HostBlockPool> const host_pool_ SPILLWAY_PT_GUARDED_BY(accounting_mutex_);

    /// Declared last: its periodic thread starts once the accounting exists,
    /// and stops before anything else is destroyed.
    SpillManager spill_manager_;
};

}  // namespace spillway::memory
