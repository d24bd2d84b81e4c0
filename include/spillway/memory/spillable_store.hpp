#pragma once
/// @file
/// A thread-safe keyed container of buffers whose HOST buffers the spill
/// manager can move to disk, and that reads them back when they are taken.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <spillway/core/mutex.hpp>
#include <spillway/memory/bookkeeping_reservation.hpp>
#include <spillway/memory/buffer.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/memory_type.hpp>
#include <spillway/memory/spill_manager.hpp>

namespace spillway::memory {

/// Buffers by key, any of which may be spilled to DISK while it waits, and
/// which come back in HOST memory when taken out. Built for the collectives:
/// a shuffler keeps the chunks it has yet to send in one store and the
/// chunks it has received in another, keyed by chunk id.
///
/// The store registers a spill function with its resource's spill manager
/// when it is made and removes it when it is destroyed. Asked to spill
/// `amount` bytes, the function chooses its victims under the store's lock
/// and writes them outside it, so inserts and extracts of other keys go on
/// while it writes, and so do other spills of the store: the function is
/// registered `SpillConcurrency::shared`, and each caller writes victims of
/// its own. It announces its victims' bytes to the spill manager once they
/// are chosen (`SpillAnnouncement::victims`), before writing them.
///
/// Victims are chosen among the HOST buffers not being moved, one at a time
/// until `amount` is covered: the smallest that alone covers what is still
/// missing, or, when none is that large, the largest; of equal sizes, the
/// one with the largest key. This frees the amount with the fewest files and
/// the least excess. A store made with a `batch_bytes` writes its buffers
/// smaller than that into one file whatever their number, so it chooses
/// those by key alone, largest first, once what is still missing is less
/// than a batch or no larger buffer is left. So when buffers are taken in
/// key order, the store spills those needed last, and small buffers with
/// neighbouring keys lie next to each other on disk, to be read back
/// together.
///
/// Each key held costs HOST memory whatever its buffer's tier: its nodes in
/// the store's indexes, and what the caller keeps per key. A store made with
/// `owner_bytes_per_key` counts that bookkeeping: it keeps
/// `bookkeeping_bytes_per_key()` bytes per key reserved in its resource's
/// HOST tier (a `BookkeepingReservation`: in steps of 4 KiB, overbooking
/// rather than spilling, so it may run under any lock), and returns them as
/// keys go; an empty store reserves nothing. So a store of very many small
/// buffers, spilled or not, pushes buffers to disk instead of growing the
/// process past its limit unseen.
///
/// A buffer being moved between tiers (by a spill, an extract or a prefetch)
/// stays in the store; an `extract` of its key waits for the move to finish.
///
/// Each write of a buffer or of buffers together, each read back by
/// `extract` and each `prefetch` is a trace span (`core/trace.hpp`) in
/// category `spill`, named `spill`, `unspill` and `prefetch`, with its bytes
/// and its (first) key.
///
/// Statistics, named after the store (`<name>` as given to the constructor):
/// `<name>.spill.bytes` (written out by the spill function),
/// `<name>.unspill.bytes` (read back by `extract`) and
/// `<name>.prefetch.bytes` (read back by `prefetch`).
///
/// Thread safety: every member function may be called concurrently.
///
/// Lifetime: the resource must outlive the store. Destroying the store
/// removes its spill function, waiting for a spill of it in progress; no other
/// call may run on the store then, and it must not be destroyed from inside a
/// spill function of the same resource (removal would wait for itself, so it
/// throws, which terminates a destructor).
class SpillableStore {
  public:
    /// A buffer's key, such as a chunk id.
    using Key = std::uint64_t;

    /// An empty store of `resource`'s buffers, whose spill function is
    /// registered with `spill_priority` (higher spills first). With
    /// `batch_bytes` above zero, each call of the spill function frees at
    /// least that much when the store holds it, and writes the victims
    /// smaller than that together into one spill file
    /// (`BufferResource::move_to_disk`): a store of many small buffers then
    /// spills a file-full at a time instead of a file per buffer, at the cost
    /// of spilling up to `batch_bytes` more than asked. With
    /// `owner_bytes_per_key` set, the store counts its bookkeeping (see the
    /// class comment) and these bytes per key, the HOST memory the caller
    /// keeps per key beside the store (an index entry of its own, say).
    /// @throws InvalidArgument if `name` is empty, or if called from inside a
    ///         spill function of `resource`.
    SpillableStore(BufferResource& resource, std::string name, int spill_priority = 0, std::size_t batch_bytes = 0,
                   std::optional<std::size_t> owner_bytes_per_key = std::nullopt);
    /// Removes the spill function (waiting for it to return if it runs), then
    /// frees every buffer still held.
    ~SpillableStore();
    SpillableStore(SpillableStore const&) = delete;
    SpillableStore& operator=(SpillableStore const&) = delete;

    /// Stores `buffer` under `key`. With `MemoryConfig::force_disk`, a HOST
    /// buffer is moved to DISK first, on the calling thread.
    /// @throws InvalidArgument if `key` is already held, or `buffer` is empty
    ///         or of another resource; the buffer is freed.
    /// @throws as `BufferResource::move` under `force_disk`.
    void insert(Key key, Buffer buffer);

    /// Puts `buffer`, taken out under `key` by `extract`, back as it is,
    /// without the move that `insert` makes under `force_disk`: the rollback
    /// of a failed use of it, inside a `catch`, which must neither throw nor
    /// lose the buffer. Aborts if `key` is held (a caller's bug) or the
    /// store's bookkeeping cannot be allocated.
    void restore(Key key, Buffer buffer) noexcept;

    /// Removes the buffer under `key` and returns it in HOST memory, reading
    /// it back from DISK if it was spilled: the HOST bytes are reserved with
    /// `reserve_and_spill(HOST, size, allow_overbooking)`, so this may spill
    /// other buffers (of this store too), and with `AllowOverbooking::yes`
    /// reads the buffer back even past the HOST limit. Returns nothing if
    /// `key` is not held. Waits while the buffer is being moved by another
    /// call.
    /// @throws OutOfMemory if HOST has no room even after spilling and
    ///         overbooking is not allowed; the buffer stays in the store.
    /// @throws IoError / CorruptData naming the spill file if it cannot be
    ///         read back; the buffer stays in the store, on DISK.
    /// @throws InvalidArgument if called from inside a spill function when
    ///         reading the buffer back needs spilling.
    std::optional<Buffer> extract(Key key, AllowOverbooking allow_overbooking = AllowOverbooking::no);

    /// As `extract(key)`, but a spilled buffer is read back into
    /// `reservation` (HOST, of this store's resource), made beforehand, for
    /// example by a coroutine that waited for the room: the read-back takes
    /// the buffer's size from it and leaves the rest. A buffer in HOST leaves
    /// `reservation` alone.
    /// @throws ReservationError if `reservation` is neither empty nor HOST,
    ///         or if the buffer is spilled and `reservation` holds less than
    ///         its size; the buffer stays in the store.
    /// @throws IoError / CorruptData as `extract(key)`.
    std::optional<Buffer> extract(Key key, MemoryReservation& reservation);

    /// Removes the buffer under `key` and returns it if it is in HOST
    /// memory, waiting while it is being moved; returns nothing, leaving it
    /// in the store, if it is spilled, and nothing if `key` is not held.
    std::optional<Buffer> extract_if_in_host(Key key);

    /// Removes the buffer under `key` and frees it where it is, without
    /// reading a spilled one back; returns whether `key` was held. Waits
    /// while the buffer is being moved by another call.
    bool erase(Key key);

    /// Removes the buffer with the smallest key and returns it with its key,
    /// as `extract` does; returns nothing when the store is empty.
    /// @throws as `extract`.
    std::optional<std::pair<Key, Buffer>> extract_first();

    /// Reads the spilled buffers under `keys` back into HOST memory ahead of
    /// their use, while HOST has room for them without spilling (a prefetch
    /// never spills, so it cannot evict what it is about to use) beyond what
    /// requests wait for (`BufferResource::memory_waiting`): skipping
    /// keys that are absent, in HOST, being moved or listed before, it takes the keys in
    /// order up to the first buffer HOST has no room for, and reads them
    /// together (`BufferResource::move_to_host`: each spill file once, and
    /// neighbours in it in one request). Returns the bytes read back.
    /// @throws IoError / CorruptData as `extract`; every buffer then stays
    ///         on DISK.
    std::size_t prefetch(std::span<Key const> keys);

    /// The store's spill function: moves HOST buffers, chosen as the class
    /// comment says, to DISK until `amount` bytes are freed or none is left.
    /// Returns the HOST bytes freed. Safe to call directly.
    /// @throws OutOfMemory naming `max_spill_bytes` when the spill quota is
    ///         reached, and IoError when a spill file cannot be written; the
    ///         buffers not yet written stay in HOST.
    std::size_t spill(std::size_t amount);

    /// Whether a buffer is held under `key`.
    [[nodiscard]] bool contains(Key key) const;
    /// The number of buffers held.
    [[nodiscard]] std::size_t size() const;
    /// Whether no buffer is held.
    [[nodiscard]] bool empty() const { return size() == 0; }
    /// The keys held, in increasing order; a snapshot.
    [[nodiscard]] std::vector<Key> keys() const;
    /// The bytes of the buffers held in `tier` (a buffer being moved counts
    /// in the tier it is leaving).
    [[nodiscard]] std::uint64_t bytes(MemoryType tier) const;
    /// The name given to the constructor.
    [[nodiscard]] std::string const& name() const noexcept { return name_; }
    /// The HOST bytes counted per key held: the store's index nodes, as the
    /// C library allocates them, and the owner's `owner_bytes_per_key`; 0
    /// when the store was made without it.
    [[nodiscard]] std::size_t bookkeeping_bytes_per_key() const noexcept { return bytes_per_key_; }

    /// `bookkeeping_bytes_per_key` of a store made with `owner_bytes_per_key`,
    /// for plans made before the store.
    [[nodiscard]] static std::size_t bookkeeping_bytes_for(std::size_t owner_bytes_per_key) noexcept;

  private:
    /// A held buffer. Invariant: `buffer` is empty exactly while a call moves
    /// it between tiers outside the lock; `tier` and `size` describe it
    /// either way.
    struct Entry {
        std::optional<Buffer> buffer;
        MemoryType tier;
        std::size_t size;
    };
    using Entries = std::map<Key, Entry>;

    /// `extract`, reading a spilled buffer back into `*reservation`, or, if
    /// that is null, into a reservation it makes with `allow_overbooking`.
    std::optional<Buffer> extract(Key key, MemoryReservation* reservation, AllowOverbooking allow_overbooking);
    /// Waits until the entry of `key` is not being moved; returns it, or the
    /// end if `key` is not held.
    Entries::iterator settled(MutexLock& lock, Key key) SPILLWAY_REQUIRES(mutex_);
    /// Marks the entry as being moved and returns its buffer.
    Buffer take(Entries::iterator entry) SPILLWAY_REQUIRES(mutex_);
    /// Ends the move of the entry of `key`: it holds `buffer` (in whatever
    /// tier that is now).
    void put_back(Key key, Buffer buffer);
    /// Adds `buffer` under `key` and returns true, or returns false, with
    /// `buffer` untouched, if `key` is held already.
    bool add(Key key, Buffer&& buffer) SPILLWAY_REQUIRES(mutex_);
    /// Removes the entry and returns its buffer. Requires: not being moved.
    Buffer remove(Entries::iterator entry) SPILLWAY_REQUIRES(mutex_);
    /// Moves `victims` to DISK together and puts them back; returns their
    /// bytes. On failure they are left in `victims`, in HOST.
    std::size_t spill_together(std::span<std::pair<Key, Buffer>> victims);
    /// Adds the entry of `key`, of `size` bytes, to the spill candidates, or
    /// removes it.
    void add_candidate(Key key, std::size_t size) SPILLWAY_REQUIRES(mutex_);
    void remove_candidate(Key key, std::size_t size) SPILLWAY_REQUIRES(mutex_);
    /// Takes out HOST buffers worth at least `amount` bytes, chosen as the
    /// class comment says, and marks them as being moved.
    std::vector<std::pair<Key, Buffer>> choose_victims(std::size_t amount) SPILLWAY_REQUIRES(mutex_);

    // Constant after construction.
    BufferResource& resource_;
    std::string const name_;
    std::size_t const batch_bytes_;
    std::size_t const bytes_per_key_;  ///< see `bookkeeping_bytes_per_key()`

    /// Taken inside spill functions (under the spill manager's registry) and
    /// by every call; never held while I/O runs or while the spill manager is
    /// called; only the resource's accounting lock is taken under it.
    mutable Mutex mutex_;
    CondVar settled_;  ///< notified when a move of an entry ends
    Entries entries_ SPILLWAY_GUARDED_BY(mutex_);
    /// The spill candidates, the HOST entries not being moved with a size
    /// above zero: those of `batch_bytes_` or more by (size, key), and the
    /// smaller ones by key.
    std::set<std::pair<std::size_t, Key>> spillable_ SPILLWAY_GUARDED_BY(mutex_);
    std::set<Key> small_spillable_ SPILLWAY_GUARDED_BY(mutex_);
    /// Sum of the entries' sizes per tier.
    std::array<std::uint64_t, memory_type_count> bytes_ SPILLWAY_GUARDED_BY(mutex_){};
    /// Counts the keys' bookkeeping, covering `bytes_per_key_` a key.
    BookkeepingReservation bookkeeping_ SPILLWAY_GUARDED_BY(mutex_);

    /// Declared last: registered once the store is ready to be spilled.
    SpillManager::SpillFunctionId const spill_function_id_;
};

}  // namespace spillway::memory
