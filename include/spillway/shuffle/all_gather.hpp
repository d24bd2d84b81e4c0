#pragma once
/// @file
/// Every rank's chunks, gathered on every rank, spillable while they wait.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <spillway/comm/communicator.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/shuffle/op_id.hpp>
#include <spillway/shuffle/packed_data.hpp>
#include <spillway/shuffle/shuffle_config.hpp>

namespace spillway::shuffle {

namespace detail {
class Exchange;
}

/// One rank's part of an all-gather: every rank inserts chunks, and every
/// rank gets every rank's chunks (its own included).
///
/// Every rank of the communicator constructs an `AllGather` with the same op
/// id (an `AllGather` and a `Shuffler` may share one), inserts, calls
/// `insert_finished`, and then `wait_and_extract`. It runs on the same engine
/// as `Shuffler`, with one partition that every rank owns: the same finish
/// protocol, receive-side backpressure, spillable stores
/// (`allgather.outgoing.*`, `allgather.received.*`), memory bound, failure
/// handling, statistics (prefixed `allgather.`) and trace spans; see
/// `Shuffler`. A chunk is copied once per other rank at `insert`; the copies
/// wait, spillable, to be sent.
///
/// Small payloads are cheap: a few hundred bytes per rank (per-rank counts
/// or checksums) cost one message to each rank and no spilling.
///
/// Thread safety: every member function may be called concurrently, except
/// that no call may run while the object is destroyed.
///
/// Lifetime: the communicator and the resource outlive it.
class AllGather {
  public:
    /// Whether `wait_and_extract` orders its result.
    enum class Ordered : bool {
        /// In the order the chunks arrived.
        no,
        /// By inserting rank, then sequence number (then insertion order).
        yes,
    };

    /// Starts this rank's part of all-gather `op_id`.
    /// Requires: `buffer_resource` is `communicator.buffer_resource()`;
    /// `op_id <= max_op_id` and no other `AllGather` of this communicator
    /// object has it.
    /// @throws InvalidArgument if a requirement is not met.
    /// @throws OutOfMemory if the HOST limit is below the state it keeps
    ///         (`Shuffler::bytes_per_partition`).
    AllGather(
        comm::Communicator& communicator,
        OpId op_id,
        memory::BufferResource& buffer_resource,
        ShuffleConfig const& config = {}
    );

    /// As `Shuffler::~Shuffler`: completes the sending once every chunk was
    /// extracted, else abandons the all-gather (the other ranks fail).
    ~AllGather();
    AllGather(AllGather const&) = delete;
    AllGather& operator=(AllGather const&) = delete;

    /// Inserts `data` for every rank, ordered by `sequence` among this rank's
    /// chunks. Copies of it for the other ranks are reserved with
    /// `reserve_and_spill`, past the HOST limit if need be (they are
    /// spillable as soon as they are made).
    /// Requires: `data.data` is a buffer of the resource (any tier); metadata
    /// of at most `max_packed_metadata_size`.
    /// @throws InvalidArgument if a requirement is not met, or after
    ///         `insert_finished`; the all-gather's error.
    void insert(std::uint64_t sequence, PackedData data);

    /// Ends this rank's input.
    /// @throws InvalidArgument if called twice; the all-gather's error.
    void insert_finished();

    /// Blocks until every rank has called `insert_finished` and every chunk
    /// has arrived, then returns all of them, in HOST memory, `ordered` or in
    /// arrival order. Callable once.
    /// @throws InvalidArgument before `insert_finished` or when called a
    ///         second time; the all-gather's error (naming the rank that gave
    ///         up, if one did).
    /// @throws IoError / CorruptData if a spilled chunk cannot be read back.
    std::vector<PackedData> wait_and_extract(Ordered ordered = Ordered::yes);

    /// The wait of `wait_and_extract` without blocking, for callers that wait
    /// in their own way (a coroutine that sleeps between polls): whether
    /// every rank has called `insert_finished` and every chunk has arrived.
    /// Once it has returned true, or `wait_and_extract` has returned, it
    /// keeps returning true.
    /// @throws as `wait_and_extract`, except that a second call is no error.
    bool poll();

    /// Removes and returns the next gathered chunk, in HOST memory, in the
    /// order `wait_and_extract` returns them with `Ordered::yes`; nothing once
    /// all have been taken (by it or by `wait_and_extract`). Lets a caller
    /// stream gathered data larger than memory. Spilled chunks are read back
    /// here, past the HOST limit if need be (one at a time).
    /// @throws InvalidArgument until `poll` has returned true (or
    ///         `wait_and_extract` has returned); the
    ///         all-gather's error; IoError / CorruptData if a spilled chunk
    ///         cannot be read back.
    std::optional<PackedData> extract_chunk();

    /// Whether every gathered chunk has been taken: `wait_and_extract` has
    /// returned, or `extract_chunk` has returned the last chunk. A
    /// `wait_and_extract` after that throws `InvalidArgument`.
    [[nodiscard]] bool finished() const;

  private:
    // Constant after construction.
    memory::BufferResource& resource_;
    comm::Communicator& communicator_;
    std::unique_ptr<detail::Exchange> const exchange_;
    /// Whether `poll` has seen the gather complete.
    std::atomic<bool> complete_{false};
};

}  // namespace spillway::shuffle
