#pragma once
/// @file
/// The engine under `Shuffler` and `AllGather`: chunks routed to ranks,
/// spillable while they wait on either side, the finish protocol, and the
/// background thread that drives it all.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <spillway/comm/communicator.hpp>
#include <spillway/core/mutex.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/spillable_store.hpp>
#include <spillway/shuffle/op_id.hpp>
#include <spillway/shuffle/packed_data.hpp>
#include <spillway/shuffle/partition_owner.hpp>
#include <spillway/shuffle/shuffle_config.hpp>

namespace spillway::shuffle::detail {

struct WireHeader;

/// Which collective an exchange serves: picks its tag (`2 * op_id + kind`),
/// its statistics prefix and its trace category.
enum class Collective : std::uint8_t { shuffler = 0, all_gather = 1 };

/// Holds one tag of one communicator for the lifetime of the object, so two
/// live collectives never share a tag (they would take each other's messages).
///
/// Thread safety: the registry behind it is process-wide and locked.
class TagLease {
  public:
    /// @throws InvalidArgument naming `what` if the tag is held already.
    TagLease(comm::Communicator const& communicator, comm::Tag tag, std::string const& what);
    ~TagLease();
    TagLease(TagLease const&) = delete;
    TagLease& operator=(TagLease const&) = delete;

  private:
    comm::Communicator const& communicator_;
    comm::Tag const tag_;
};

/// Moves chunks from the ranks that insert them to the ranks that own their
/// partitions, and hands them out per partition once every rank has finished.
/// docs/architecture.md ("shuffle/") describes the protocol and the memory
/// bound; the public headers restate what callers may rely on.
///
/// Thread safety: every member function may be called concurrently. One
/// background thread (the progress thread) posts sends, probes, receives and
/// prefetches; the callers' threads insert and extract.
class Exchange {
  public:
    /// A chunk for `destination`: `partition` is one of the destination's
    /// partitions, `sequence` orders it among the inserting rank's chunks.
    struct Item {
        comm::Rank destination;
        PartitionId partition;
        std::uint64_t sequence;
        PackedData data;
    };

    /// How a collective's partitions are laid out over the ranks, which every
    /// rank must give alike: each rank's finish message carries its own, and
    /// a receiver fails the exchange where it differs from its own.
    struct Layout {
        PartitionId partitions = 1;
        PartitionOwner owner = PartitionOwner::round_robin;
    };

    /// Starts the exchange of `communicator`'s rank, which owns
    /// `local_partitions` (sorted, distinct) of `layout`, and its progress
    /// thread.
    /// Requires: `op_id <= max_op_id`; the resource is the communicator's.
    /// @throws InvalidArgument if another live exchange holds the tag.
    /// @throws OutOfMemory if the local partitions' state is more than the
    ///         HOST limit (`reserve_partition_bookkeeping`).
    Exchange(
        comm::Communicator& communicator, OpId op_id, Collective collective, Layout layout,
        std::vector<PartitionId> local_partitions, ShuffleConfig const& config
    );
    /// Completes the sending if the caller is done (`finished()`), else
    /// abandons the exchange; then stops the progress thread. See the
    /// destructor of `Shuffler`.
    ~Exchange();
    Exchange(Exchange const&) = delete;
    Exchange& operator=(Exchange const&) = delete;

    /// Takes `items` in. Requires: each item's partition is one of its
    /// destination's, its data is a buffer of the resource, its metadata fits.
    /// @throws InvalidArgument after `insert_finished`; the error of a failed
    ///         exchange. An error while storing a chunk fails the exchange.
    void insert(std::vector<Item> items);
    /// Ends this rank's input.
    /// @throws InvalidArgument if called twice; the error of a failed exchange.
    void insert_finished();

    /// See `Shuffler::end_early_quietly`.
    void end_early_quietly() noexcept;

    /// The lowest local partition that is complete and that neither this nor
    /// `wait` has returned yet, waiting for one; nothing once every local
    /// partition has been returned and every destination has been sent its
    /// finish message.
    /// @throws InvalidArgument before `insert_finished`; the exchange's error.
    std::optional<PartitionId> wait_any();
    /// `wait_any` without waiting: the partition it would return now, if
    /// any, and whether it would return nothing (the end).
    /// @throws as `wait_any`.
    std::pair<std::optional<PartitionId>, bool> poll_any();
    /// Waits until the local partition `partition` is complete.
    /// @throws as `wait_any`.
    void wait(PartitionId partition);
    /// Every remaining chunk of the complete local partition `partition`, in
    /// HOST memory, ordered by (source rank, sequence) or, unless `ordered`,
    /// in arrival order.
    /// @throws InvalidArgument if it is not complete or already extracted.
    std::vector<PackedData> extract(PartitionId partition, bool ordered);
    /// The next chunk of the complete local partition `partition`; nothing
    /// once all have been taken.
    /// @throws InvalidArgument if it is not complete.
    std::optional<PackedData> extract_chunk(PartitionId partition);
    /// Whether `insert_finished` was called and every local partition has been
    /// extracted.
    [[nodiscard]] bool finished() const;

    /// The local partitions, sorted.
    [[nodiscard]] std::vector<PartitionId> const& local_partitions() const noexcept { return local_partitions_; }

  private:
    using Key = memory::SpillableStore::Key;

    /// A chunk waiting in a destination's queue; its buffer is in `outgoing_`.
    struct OutgoingChunk {
        Key key;
        std::size_t size;                ///< of its buffer
        std::uint16_t inline_metadata;   ///< bytes of metadata at the buffer's end
        PartitionId partition;
        std::uint64_t sequence;
        std::vector<std::byte> metadata;
    };

    /// What this rank owes one destination.
    struct Destination {
        std::deque<OutgoingChunk> queue;  ///< in insertion order
        std::uint64_t sent = 0;           ///< chunk messages posted
        bool closed = false;              ///< its finish or abandon message has been posted
    };

    /// A chunk stored in `received_` and not yet extracted.
    struct ChunkRef {
        comm::Rank source;
        std::uint64_t sequence;
        Key key;  ///< see `received_key`; also the arrival order in its partition
        std::size_t size;               ///< of its buffer
        std::uint16_t inline_metadata;  ///< bytes of metadata at the buffer's end
        std::vector<std::byte> metadata;  ///< the metadata, unless inline
    };

    /// One local partition. Invariant: `complete` once every source is done
    /// and `receiving == 0`; `returned` implies `complete`; `extracted`
    /// implies `complete` and `chunks` empty.
    struct Partition {
        /// Sorted by (source, sequence) once complete. A vector, since an
        /// empty one holds no memory (an empty deque holds about 600 bytes,
        /// which a shuffle into millions of partitions multiplies).
        std::vector<ChunkRef> chunks;
        std::size_t taken = 0;        ///< chunks at the front of `chunks` that `extract_chunk` took
        std::size_t receiving = 0;    ///< probed chunk messages not yet in `received_`
        bool complete = false;
        bool returned = false;  ///< returned by `wait_any` or `wait`
        bool extracted = false;

        /// Drops the chunks taken, so that `chunks` holds those left.
        void drop_taken() {
            chunks.erase(chunks.begin(), chunks.begin() + static_cast<std::ptrdiff_t>(taken));
            taken = 0;
        }
    };

  public:
    /// What is kept for each local partition besides its chunks: its state,
    /// and its node in `ready_` (a red-black tree node and the value).
    static constexpr std::size_t partition_bookkeeping_bytes = sizeof(Partition) + 48;
    /// The HOST bytes counted per chunk held, received or yet to send, in
    /// any tier: its key's bookkeeping in the store that holds it.
    [[nodiscard]] static std::size_t chunk_bookkeeping_bytes() noexcept {
        return memory::SpillableStore::bookkeeping_bytes_for(std::max(sizeof(OutgoingChunk), sizeof(ChunkRef)));
    }

  private:
    /// A chunk message probed but not yet received (receive-side backpressure).
    struct Deferred {
        comm::Incoming incoming;
        std::size_t partition;  ///< local index
        std::uint64_t sequence;
    };

    /// A receive posted and not yet complete.
    struct Receiving {
        comm::Future<comm::Message> message;
        std::size_t partition;  ///< local index
        std::uint64_t sequence;
        std::size_t size;       ///< of its payload
        std::chrono::steady_clock::time_point posted = std::chrono::steady_clock::now();
    };

    /// A send posted and not yet complete.
    struct InFlight {
        comm::Future<void> sent;
        std::size_t size;
        std::optional<std::size_t> chunk_to;  ///< the destination of a chunk
        std::chrono::steady_clock::time_point posted = std::chrono::steady_clock::now();
    };

    /// Validates and stores one item. Requires: an insert is counted active.
    void store(Item& item);
    /// Moves `chunk`'s metadata to the end of a copy of its buffer if the
    /// chunk is small and HOST has room for the copy; returns the bytes so
    /// moved (0 if none).
    std::uint16_t inline_metadata(PackedData& chunk);
    /// The chunk `chunk` refers to, from its `buffer` (in HOST), with its
    /// metadata taken back out of the buffer if it was inline. On failure
    /// `buffer` and `chunk` are unchanged.
    PackedData detach_metadata(memory::Buffer& buffer, ChunkRef& chunk);
    /// Ends an insert; the last one after `insert_finished` ends the input.
    void end_insert();
    /// The HOST reservation of `partition_bookkeeping_`: overbooked if need
    /// be (what else is held may yet spill), nothing for no partitions.
    /// @throws OutOfMemory naming the partitions if it is more than the
    ///         HOST limit.
    [[nodiscard]] memory::MemoryReservation reserve_partition_bookkeeping() const;
    /// Reads back the chunks `chunks` of the local partition `index`; on
    /// failure puts them back into the partition and rethrows.
    std::vector<PackedData> read_back(std::size_t index, std::vector<ChunkRef> chunks);
    /// The chunk `chunk` refers to, taken from `received_` in HOST. On
    /// failure its buffer stays in `received_` and `chunk` is unchanged.
    PackedData read_chunk(ChunkRef& chunk);
    /// Puts `chunks`, taken from the local partition `index`, back at its
    /// front, the first `read.size()` of them from the chunks `read` back,
    /// and marks the partition not extracted.
    void put_back(std::size_t index, std::vector<ChunkRef> chunks, std::vector<PackedData>& read);

    // Progress thread: `run` repeats `step`, which runs each activity once;
    // each returns whether it did anything.
    void run();
    bool step();
    bool complete_sends();
    bool complete_receives(bool failed);
    bool post_sends();
    bool post_closing_messages();
    /// Sends a heartbeat to every destination not yet closed, at a quarter
    /// of `collective_timeout`.
    bool post_heartbeats();
    bool probe(bool failed);
    /// Fails the exchange with `PeerTimeout` if a source whose messages it
    /// still expects sent nothing for `collective_timeout`; once it has
    /// failed, stops waiting for such sources instead. Time in which this
    /// thread did not run (half the timeout or more since its last look: its
    /// process was stopped or starved) counts for no source: each is given
    /// the whole timeout again, so a process that resumes does not blame
    /// peers for its own silence.
    bool stop_waiting_for_silent_peers(bool failed);
    bool post_receives();
    bool prefetch();
    /// The HOST bytes `prefetch` reads ahead of extraction at most.
    std::size_t prefetch_budget() const;
    /// After an error while the exchange was abandoned already: stops
    /// sending, receiving and draining, so that the destructor returns. Peers
    /// may then wait for this rank's messages until their own errors.
    void give_up(std::exception const& error);
    /// An `InvalidArgument` naming both if the layout in `source`'s finish
    /// message `header` is not this rank's; null if it is.
    [[nodiscard]] std::exception_ptr layout_error(WireHeader const& header, comm::Rank source) const;
    /// Queues a probed chunk message to be received when memory allows.
    void defer(comm::Incoming incoming, PartitionId partition, std::uint64_t sequence, comm::Rank source);
    /// Whether the progress thread may stop: the exchange is closing and has
    /// nothing left to post, receive or drain.
    bool done() SPILLWAY_REQUIRES(mutex_);
    /// Whether nothing can arrive or complete any more without a caller.
    bool quiet() SPILLWAY_REQUIRES(mutex_);

    /// The outgoing chunk under `key` in HOST memory, read back if it was
    /// spilled; nothing while HOST has no room for it and sends or receives
    /// of this exchange in progress can still free some.
    std::optional<memory::Buffer> take_outgoing(Key key, std::size_t size);
    /// The key of a chunk arriving for the local partition of `index`: the
    /// index, then the arrival. The received store spills its small chunks
    /// largest key first, so the partitions extracted last (extraction goes
    /// in increasing order) spill first, and each one's chunks lie next to
    /// each other in the spill files, to be read back together.
    Key received_key(std::size_t index);
    /// A HOST reservation of `size` bytes for a receive; empty while HOST has
    /// no room and a receive of this exchange is in progress.
    memory::MemoryReservation reserve_for_receive(std::size_t size);
    /// Records a chunk of `size` bytes taken past the HOST limit.
    void record_overbooking(std::size_t size);
    /// The trace category: `shuffle` or `allgather`.
    char const* category() const noexcept;

    /// Fails the exchange with `error` (the first error wins): callers get
    /// it, and the progress thread abandons the exchange.
    void fail(std::exception_ptr error);
    void fail_locked(std::exception_ptr error) SPILLWAY_REQUIRES(mutex_);
    /// Rethrows the exchange's error, if any.
    void rethrow_locked() const SPILLWAY_REQUIRES(mutex_);
    /// @throws InvalidArgument naming `what` before `insert_finished`.
    void require_insert_finished_locked(char const* what) const SPILLWAY_REQUIRES(mutex_);
    /// This rank has no more chunks to insert: it is done as a source.
    void finish_inserting_locked() SPILLWAY_REQUIRES(mutex_);
    /// One more source (this rank, or a peer whose finish arrived) is done.
    void source_done_locked() SPILLWAY_REQUIRES(mutex_);
    /// Completes the partition `index` if every source is done and nothing
    /// of it is being received.
    void try_complete_locked(std::size_t index) SPILLWAY_REQUIRES(mutex_);
    void mark_returned_locked(std::size_t index) SPILLWAY_REQUIRES(mutex_);
    void mark_extracted_locked(std::size_t index) SPILLWAY_REQUIRES(mutex_);
    /// The partition `index`, checked to be complete (for `what`).
    Partition& extractable_locked(std::size_t index, char const* what) SPILLWAY_REQUIRES(mutex_);
    /// The local index of `partition`. Requires: it is local (asserted).
    std::size_t index_of(PartitionId partition) const;

    // Constant after construction.
    comm::Communicator& communicator_;
    memory::BufferResource& resource_;
    Statistics& statistics_;
    Collective const collective_;
    comm::Tag const tag_;
    ShuffleConfig const config_;
    Layout const layout_;
    std::vector<PartitionId> const local_partitions_;
    std::string const name_;       ///< statistics prefix: `shuffle` or `allgather`
    /// The names of the statistics recorded here, `<name_>.<what>`; kept
    /// because `ScopedTimer` holds on to its name.
    struct StatisticNames {
        std::string insert_seconds, wait_seconds, extract_seconds, exchange_seconds;
        std::string send_bytes, receive_bytes, local_bytes, overbooked_bytes;
    } const statistic_names_;
    std::string const operation_;  ///< "shuffle op 3 on rank 1", for messages
    std::chrono::steady_clock::time_point const started_;
    TagLease const lease_;
    /// HOST bytes for what is kept per local partition besides its chunks
    /// (`partition_bookkeeping_bytes`), reserved before it is made.
    memory::MemoryReservation const partition_bookkeeping_;

    /// Chunks waiting to be sent, and chunks received (or kept locally) and
    /// not yet extracted. Received chunks spill first: they are needed last.
    memory::SpillableStore outgoing_;
    memory::SpillableStore received_;
    /// Counts the chunks stored in both stores, for their keys. Relaxed: only
    /// uniqueness matters; the order of received keys within a partition is
    /// the arrival order, which the progress thread alone assigns for
    /// received chunks.
    std::atomic<Key> next_key_{0};
    /// The low bits of a received key that hold `next_key_`; the high ones
    /// hold the partition's local index.
    int const arrival_bits_;

    // Lock order: `mutex_` is taken with no other lock held, and nothing that
    // may spill, do I/O or call the communicator is called under it.
    mutable Mutex mutex_;
    CondVar progress_wanted_;       ///< wakes the progress thread
    CondVar partitions_changed_;    ///< wakes callers of wait, wait_any
    bool wake_ SPILLWAY_GUARDED_BY(mutex_) = false;
    bool closing_ SPILLWAY_GUARDED_BY(mutex_) = false;  ///< the destructor runs
    bool ends_early_quietly_ SPILLWAY_GUARDED_BY(mutex_) = false;  ///< abandoning it warns of nothing
    bool insert_finished_ SPILLWAY_GUARDED_BY(mutex_) = false;
    std::size_t active_inserts_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    /// `insert_finished` was called and no insert is running: the finish
    /// messages may go once the queues are empty.
    bool inserts_done_ SPILLWAY_GUARDED_BY(mutex_) = false;
    std::exception_ptr error_ SPILLWAY_GUARDED_BY(mutex_);  ///< set once the exchange failed
    std::vector<Destination> destinations_ SPILLWAY_GUARDED_BY(mutex_);  ///< by rank
    std::size_t open_destinations_ SPILLWAY_GUARDED_BY(mutex_);          ///< not `closed`
    std::vector<Partition> partitions_ SPILLWAY_GUARDED_BY(mutex_);      ///< by local index
    /// Sources (ranks, this one included) whose chunks may still arrive.
    comm::Rank sources_pending_ SPILLWAY_GUARDED_BY(mutex_);
    std::size_t completed_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    std::size_t returned_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    std::size_t extracted_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    std::set<std::size_t> ready_ SPILLWAY_GUARDED_BY(mutex_);  ///< complete, not yet returned
    /// The local index extraction last took from; prefetch reads ahead from it.
    std::size_t extraction_cursor_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    /// Bytes `extract_chunk` took since it last woke the progress thread,
    /// and the local index of the partition it woke it for.
    std::size_t extracted_since_wake_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    std::optional<std::size_t> woken_for_ SPILLWAY_GUARDED_BY(mutex_);

    // Owned by the progress thread alone.
    std::vector<InFlight> in_flight_;
    std::size_t in_flight_bytes_ = 0;
    std::vector<std::size_t> chunks_in_flight_;  ///< by destination
    std::deque<Deferred> deferred_;
    std::vector<Receiving> receiving_;
    /// Per source rank: chunk messages probed, and whether its finish or
    /// abandon message has been probed (then it is never probed again).
    std::vector<std::uint64_t> probed_;
    std::vector<bool> source_closed_;
    /// Per source rank: when its last message was probed (or the exchange
    /// started).
    std::vector<std::chrono::steady_clock::time_point> last_heard_;
    std::chrono::steady_clock::time_point next_heartbeat_;  ///< when heartbeats go out next
    /// When `stop_waiting_for_silent_peers` last looked (or the exchange started).
    std::chrono::steady_clock::time_point last_look_;
    comm::Rank next_destination_ = 0;  ///< where the next round of sends starts

    /// Declared last: started once everything it uses exists.
    std::thread progress_thread_;
};

}  // namespace spillway::shuffle::detail
