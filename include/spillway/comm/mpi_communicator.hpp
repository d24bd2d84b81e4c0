#pragma once
/// @file
/// The MPI backend: ranks are MPI processes, launched by `mpirun`.

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <spillway/comm/communicator.hpp>
#include <spillway/comm/mpi_config.hpp>
#include <spillway/core/mutex.hpp>
#include <spillway/memory/buffer.hpp>

namespace spillway::comm {

namespace detail {
class MpiProgress;
class MpiPendingReceive;
}  // namespace detail

/// One rank of an MPI communicator, over non-blocking point-to-point MPI
/// calls with matched probes (`MPI_Improbe`, `MPI_Mrecv`, `MPI_Imrecv`).
///
/// Each spillway message is a header MPI message (payload size, and the
/// metadata) on MPI tag `2 * tag`, followed by its payload in
/// `ceil(size / max_message_bytes)` MPI messages on tag `2 * tag + 1`. The
/// header and payload messages of one message are posted together under one
/// lock, so payloads follow their headers in order per (rank pair, tag).
/// `probe` matches the header and then the payload messages, which takes
/// them off MPI's matching queue without receiving them; `receive` posts
/// `MPI_Imrecv` into a buffer made from the caller's reservation. Above MPI's
/// eager limit the payload stays at the sender (rendezvous) until then.
///
/// Progress: a progress thread per communicator completes every posted send
/// and receive (see `detail::MpiProgress`); `probe` runs on the caller.
///
/// Destruction: drops the messages that were partly probed, then waits up to
/// `MpiConfig::shutdown_timeout` for every send and receive in flight (a
/// send is in flight until its destination receives it) and aborts with a
/// message if they do not finish. Messages that were never probed are left
/// to MPI. Then frees its MPI communicator.
///
/// Thread safety: as `Communicator`. Sends take `send_mutex_` only while
/// posting, probes take `match_mutex_`.
///
/// Lifetime: MPI stays initialised (e.g. by an `MpiEnvironment`) until the
/// communicator is destroyed; the `BufferResource` outlives it; every
/// `Incoming` it returned is received or dropped before it is destroyed
/// (checked: aborts with a message).
class MpiCommunicator final : public Communicator {
  public:
    /// The rank of this process in `comm`, over a duplicate of `comm` so that
    /// spillway's messages never mix with the application's. Collective over
    /// `comm`: every process of it constructs one, in the same order relative
    /// to other collective calls on `comm`.
    ///
    /// Requires: MPI is initialised with `MPI_THREAD_MULTIPLE`;
    /// `config.max_message_bytes` is in `[1, INT_MAX]`.
    /// @throws InvalidArgument if a requirement is not met.
    /// @throws IoError if duplicating `comm` fails.
    MpiCommunicator(MPI_Comm comm, memory::BufferResource& resource, MpiConfig config = {});

    /// See "Destruction" in the class comment.
    ~MpiCommunicator() override;

    /// True for a peer on another host, whose payloads cross a network;
    /// false for one on this host (`MPI_COMM_TYPE_SHARED`: shared memory, or
    /// the loopback), whose payloads are copied in memory.
    [[nodiscard]] bool payloads_may_change_in_transit(Rank peer) const noexcept override;

  private:
    friend class detail::MpiPendingReceive;

    /// `comm`'s duplicate, with errors returned instead of aborting, its
    /// rank and size, and which of its ranks share this process's host.
    struct Endpoint {
        MPI_Comm comm;
        Rank rank;
        Rank nranks;
        std::vector<bool> on_this_host;
    };
    /// Checks the requirements of the public constructor, then duplicates `comm`.
    static Endpoint duplicate(MPI_Comm comm, MpiConfig const& config);

    /// A message whose header has been matched and received, but not every
    /// payload message has been matched yet.
    struct PartialMatch {
        detail::ProbedMessage message;
        std::size_t part_size;             ///< the sender's max_message_bytes
        std::size_t part_count;            ///< payload messages to match in all
        std::vector<MPI_Message> parts;    ///< those matched so far, in order
    };

    MpiCommunicator(Endpoint endpoint, memory::BufferResource& resource, MpiConfig config);

    Future<void> do_send(
        Rank destination, Tag tag, std::vector<std::byte> metadata, std::optional<memory::Buffer> payload
    ) override;
    std::optional<Incoming> do_probe(Tag tag, Rank source) override;
    Future<Message> do_receive(detail::ProbedMessage& message, memory::MemoryReservation& reservation) override;

    /// Matches the payload messages of the oldest partial match of each
    /// channel of `tag` from `source` (or any rank); returns the first that
    /// is complete.
    std::optional<Incoming> complete_partial_match(Tag tag, Rank source) SPILLWAY_REQUIRES(match_mutex_);
    /// Matches as many of `match`'s outstanding payload messages as have
    /// arrived; returns whether all are matched.
    bool match_parts(PartialMatch& match) SPILLWAY_REQUIRES(match_mutex_);
    /// `match`, complete, as an `Incoming`.
    Incoming to_incoming(PartialMatch&& match);

    /// Posts receives of the matched `parts` into `message.payload` and
    /// hands them to the progress thread. Aborts if MPI refuses (the parts
    /// are then lost and the channel cannot continue).
    Future<Message> post_receive(Message message, std::vector<MPI_Message> parts, std::size_t part_size);
    /// Receives the matched `parts` of a dropped message, one at a time, into
    /// `discard_buffer_`, grown to the largest part dropped so far (memory
    /// overbooked from the resource) and freed when no other `Incoming` with
    /// unreceived parts is alive. Blocks until the parts have arrived.
    void discard(std::size_t payload_size, std::vector<MPI_Message> parts, std::size_t part_size) noexcept;

    // Constant after construction.
    MpiConfig const config_;
    MPI_Comm comm_;  ///< freed by the destructor
    /// By rank: whether it shares this process's host (`MPI_COMM_TYPE_SHARED`).
    std::vector<bool> const on_this_host_;
    std::unique_ptr<detail::MpiProgress> progress_;  ///< reset by the destructor

    /// Held while the header and payload messages of one message are posted,
    /// so that payloads follow their headers in order.
    Mutex send_mutex_;

    /// Held while probing. Lock order: never held with `send_mutex_`.
    Mutex match_mutex_;
    /// Partial matches per (tag, source) channel, oldest first; no deque is empty.
    std::map<std::pair<Tag, Rank>, std::deque<PartialMatch>> partial_matches_
        SPILLWAY_GUARDED_BY(match_mutex_);

    /// Held while a dropped message is received into `discard_buffer_`, so
    /// that however many are dropped at once, one part is in memory.
    Mutex discard_mutex_;
    std::optional<memory::Buffer> discard_buffer_ SPILLWAY_GUARDED_BY(discard_mutex_);

    /// `Incoming`s with unreceived payload messages that are alive. Relaxed:
    /// only a count checked by the destructor, which runs after every user
    /// has been joined.
    std::atomic<std::size_t> live_incomings_{0};
};

}  // namespace spillway::comm
