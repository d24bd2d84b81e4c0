#pragma once
/// @file
/// A hash-partition exchange between the ranks of a communicator, whose
/// waiting chunks can be spilled to disk.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include <spillway/comm/communicator.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/shuffle/op_id.hpp>
#include <spillway/shuffle/packed_data.hpp>
#include <spillway/shuffle/partition_owner.hpp>
#include <spillway/shuffle/shuffle_config.hpp>

namespace spillway::shuffle {

namespace detail {
class Exchange;
}

/// One rank's part of a shuffle: every rank inserts chunks for any of
/// `total_partitions` partitions, and each partition's chunks, from every
/// rank, end up at the rank that owns it (`owner`), which extracts them.
///
/// **Use.** Every rank of the communicator constructs a `Shuffler` with the
/// same op id, partition count and owner (each rank's finish message carries
/// its count and owner, and a rank that receives others than its own fails
/// the shuffle with `InvalidArgument`, or with `CorruptData` where a chunk of
/// a partition it does not own comes first; the peers that still wait for
/// it then raise that too); then
/// ```cpp
/// std::unordered_map<PartitionId, PackedData> chunks;  // any number of times, from any threads:
/// chunks.emplace(partition, PackedData{std::move(metadata), std::move(buffer)});
/// shuffler.insert(std::move(chunks));
/// shuffler.insert_finished();                          // once, when this rank has no more input
/// while (auto const p = shuffler.wait_any()) {         // this rank's partitions, as they complete
///     for (auto& chunk : shuffler.extract(*p)) { ... }
/// }
/// ```
/// `extract_chunk` hands a partition out one chunk at a time, for partitions
/// too large to hold at once.
///
/// **Completion.** A partition is complete once every rank has called
/// `insert_finished` and every chunk inserted for it has arrived; its chunks
/// come out ordered by the rank that inserted them, then by insertion order
/// on that rank. Each rank tells every other rank how many chunks it sent it
/// in a last "finish" message, which follows the chunks on the same tag.
///
/// **Where the data waits.** Chunks waiting to be sent and chunks received
/// but not yet extracted are kept in two `memory::SpillableStore`s (whose
/// statistics are named `shuffle.outgoing.*` and `shuffle.received.*`), so
/// the resource's spill manager can move them to DISK at any time. A receiver
/// probes a message first and receives its payload only once it has a HOST
/// reservation for it (spilling to make room); otherwise the payload waits
/// at the sender. `extract` reads spilled chunks back, and a background
/// thread prefetches the next partitions' chunks (in increasing partition
/// order, from the last one extracted) into free HOST memory.
///
/// **Memory bound.** The shuffler takes HOST memory only through
/// reservations within the HOST limit L, with three exceptions, each one
/// chunk at a time, so that it always progresses:
/// - a receive, when HOST has no room even after spilling and no other
///   receive of this shuffler is in progress (its sends wait for other ranks
///   to receive, so they cannot be waited for);
/// - a send of a spilled chunk, when HOST has no room even after spilling
///   and nothing of this shuffler is in flight or being received, that is,
///   when the caller's own data fills HOST;
/// - `extract`, which returns the caller's data in HOST memory, past the
///   limit if need be.
/// Chunks in flight are limited by `ShuffleConfig::send_window`, and to 64
/// per destination, which bounds the chunks an MPI transport keeps in
/// buffers of its own at a receiver to 64 per sending rank. So while the
/// caller holds at most L - C of HOST (C: the largest chunk), the send-side
/// exception never applies, and the rank's HOST use stays at most L + C plus
/// the chunks `extract` returned that the caller still holds. Every overbooked chunk is
/// recorded in `shuffle.overbooked.bytes`.
///
/// **Statistics** (in the resource's `statistics()`, summed over shuffles):
/// `shuffle.send.bytes` / `shuffle.receive.bytes` / `shuffle.local.bytes`
/// (chunks sent, received, and kept on this rank: total bytes, and the number
/// of chunks as the record count); `shuffle.outgoing.spill.bytes`,
/// `.unspill.bytes`, `.prefetch.bytes` and the same for `shuffle.received`;
/// `shuffle.overbooked.bytes`; and the time of each phase:
/// `shuffle.insert.seconds` (in `insert`), `shuffle.exchange.seconds` (from
/// construction until every local partition is complete),
/// `shuffle.wait.seconds` (blocked in `wait`/`wait_any`) and
/// `shuffle.extract.seconds` (in `extract`/`extract_chunk`). Sends, receives,
/// spills and read-backs of chunks are trace spans (`core/trace.hpp`).
///
/// **Failure.** Misuse raises `InvalidArgument` at the call. If a rank's
/// shuffler fails (an I/O error on its progress thread, say) or is destroyed
/// before it finished, it tells every rank still waiting for its chunks,
/// whose shufflers then fail too: their `wait`, `wait_any`, `extract` and
/// `insert` rethrow the error, of the same type, naming that rank. No rank
/// is left waiting.
///
/// Thread safety: every member function may be called concurrently, except
/// that no call may run while the shuffler is destroyed.
///
/// Threads: each shuffler runs one background thread of its own, which posts
/// sends, probes, receives, spills to make room for receives, and
/// prefetches. (It does not use the `exec/` executor: its work is a polling
/// loop that must run whatever the executor is busy with.)
///
/// Lifetime: the communicator and the resource outlive the shuffler.
class Shuffler {
  public:
    /// The HOST bytes a shuffler reserves, when it is made, for the state of
    /// each partition it owns (besides their chunks), overbooking if need be:
    /// what a job's memory plan counts for its partitions.
    [[nodiscard]] static std::size_t bytes_per_partition() noexcept;

    /// The HOST bytes a shuffler keeps reserved for each chunk it holds,
    /// received or yet to send, whether the chunk's buffer is in memory or
    /// spilled: a shuffle of very many small chunks needs this much per chunk.
    [[nodiscard]] static std::size_t bytes_per_chunk() noexcept;

    /// Starts this rank's part of shuffle `op_id`.
    /// Requires: `buffer_resource` is `communicator.buffer_resource()` (received
    /// chunks are buffers of it); `total_partitions > 0`; `op_id <= max_op_id`
    /// and no other `Shuffler` of this communicator object has it.
    /// @throws InvalidArgument if a requirement is not met.
    /// @throws OutOfMemory naming them if its partitions' state
    ///         (`bytes_per_partition` each) is more than the HOST limit.
    Shuffler(
        comm::Communicator& communicator,
        OpId op_id,
        PartitionId total_partitions,
        memory::BufferResource& buffer_resource,
        PartitionOwner owner = PartitionOwner::round_robin,
        ShuffleConfig const& config = {}
    );

    /// If `finished()`: waits until every chunk and finish message of this
    /// rank has been posted (not received: other ranks may still be
    /// receiving), then stops; an error while posting them is logged, and
    /// the ranks waiting for them fail. Otherwise abandons the shuffle: logs a
    /// warning (unless `end_early_quietly` was called), tells the ranks still
    /// waiting for this rank's chunks (their shufflers fail naming this
    /// rank: with `InvalidArgument`, or, where it is destroyed while an
    /// exception unwinds the stack, with `Error` saying that an error on this
    /// rank ended it, which this rank reports), and receives and drops
    /// what other ranks still send it until each has sent its last message
    /// (so the op id is clean for reuse). Either way it returns once every
    /// other rank has called `insert_finished` or destroyed its shuffler, and
    /// frees every chunk it still holds.
    ~Shuffler();
    Shuffler(Shuffler const&) = delete;
    Shuffler& operator=(Shuffler const&) = delete;

    /// Inserts one chunk for each partition in `chunks`. Chunks for a
    /// partition of this rank stay here; others are sent to their owner in
    /// the background. The buffers may be in any tier. Takes ownership of
    /// `chunks`; on an exception they are freed.
    /// Requires: every partition `< total_partitions()`; every buffer is of
    /// the shuffler's resource; metadata of at most `max_packed_metadata_size`.
    /// @throws InvalidArgument if a requirement is not met (nothing is
    ///         inserted then), or after `insert_finished`.
    /// @throws the shuffle's error if it has failed. An error while storing a
    ///         chunk (a failed forced spill, say) fails the shuffle.
    void insert(std::unordered_map<PartitionId, PackedData> chunks);

    /// Ends this rank's input: once every rank has called it, partitions
    /// complete. Inserts still running on other threads are waited for
    /// before the finish messages go.
    /// @throws InvalidArgument if called twice; the shuffle's error.
    void insert_finished();

    /// Tells the shuffler that its caller may end it before it finishes, on
    /// purpose (a consumer that stops reading early, say): the destructor
    /// then abandons it as it says, without logging a warning.
    void end_early_quietly() noexcept;

    /// Blocks until one of this rank's partitions is complete that neither
    /// `wait_any` nor `wait` has returned yet, and returns it (the lowest
    /// such). Returns nothing once every partition of this rank has been
    /// returned (or extracted) and every chunk this rank inserted for others
    /// has been handed to the communicator, the last message to each rank
    /// included, so that a failure to send one that shows by then is
    /// reported here. A send that fails later still (the network lost while
    /// MPI delivers it) fails the shuffle, and the destructor logs it.
    /// @throws InvalidArgument if `insert_finished` has not been called (no
    ///         partition could ever complete); the shuffle's error.
    std::optional<PartitionId> wait_any();

    /// What `poll_any` found.
    struct Poll {
        /// A complete partition, which `wait_any` will not return again.
        std::optional<PartitionId> partition;
        /// Whether `wait_any` would return nothing now: every partition of
        /// this rank has been returned and every chunk for others sent.
        bool done = false;
    };

    /// `wait_any` without blocking, for callers that wait in their own way
    /// (a coroutine that sleeps on its executor between polls): the
    /// partition `wait_any` would return now, if one is complete.
    /// @throws as `wait_any`.
    Poll poll_any();

    /// Blocks until this rank's partition `partition` is complete; `wait_any`
    /// will not return it afterwards.
    /// @throws InvalidArgument if `partition` is not one of this rank's (its
    ///         owner is named) or `insert_finished` has not been called; the
    ///         shuffle's error.
    void wait(PartitionId partition);

    /// Removes and returns every remaining chunk of this rank's complete
    /// partition `partition`, in HOST memory, ordered by inserting rank, then
    /// insertion order. Spilled chunks are read back here, past the HOST
    /// limit if need be (the caller asked for them). On an exception no
    /// chunk is taken.
    /// @throws InvalidArgument if `partition` is not one of this rank's, is
    ///         not complete, or was extracted already; the shuffle's error.
    /// @throws IoError / CorruptData if a spilled chunk cannot be read back.
    std::vector<PackedData> extract(PartitionId partition);

    /// Removes and returns the next chunk of this rank's complete partition
    /// `partition`, in the order of `extract`; nothing once all have been
    /// taken. Lets a caller stream a partition larger than memory.
    /// @throws as `extract`, except that an extracted partition yields nothing.
    std::optional<PackedData> extract_chunk(PartitionId partition);

    /// Whether `insert_finished` was called and every partition of this rank
    /// has been extracted. Never true once the shuffle has failed.
    [[nodiscard]] bool finished() const;

    /// The rank that owns `partition`.
    /// @throws InvalidArgument if `partition >= total_partitions()`.
    [[nodiscard]] comm::Rank owner_of(PartitionId partition) const;
    /// This rank's partitions, in increasing order.
    [[nodiscard]] std::vector<PartitionId> const& local_partitions() const noexcept;
    /// The number of partitions.
    [[nodiscard]] PartitionId total_partitions() const noexcept { return total_partitions_; }

  private:
    /// @throws InvalidArgument naming `what` unless `partition` is one of
    ///         this rank's.
    void check_local(PartitionId partition, char const* what) const;

    // Constant after construction.
    comm::Communicator& communicator_;
    OpId const op_id_;
    PartitionId const total_partitions_;
    PartitionOwner const owner_;
    std::unique_ptr<detail::Exchange> const exchange_;

    /// The next insertion's sequence number. Relaxed: the order of
    /// concurrent inserts is whatever the increments make it.
    std::atomic<std::uint64_t> next_sequence_{0};
};

}  // namespace spillway::shuffle
