#pragma once
/// @file
/// The contract every communicator keeps: tagged, non-blocking point-to-point
/// messages of metadata and one HOST buffer, announced before their payload is
/// received.

#include <cstddef>
#include <optional>
#include <vector>

#include <spillway/comm/future.hpp>
#include <spillway/comm/incoming.hpp>
#include <spillway/comm/message.hpp>
#include <spillway/memory/buffer.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/memory_reservation.hpp>

namespace spillway::comm {

/// `nranks()` participants that exchange messages. One `Communicator` object
/// is one rank's endpoint. Backends: `LocalCommunicator` (ranks are threads of
/// one process) and `MpiCommunicator` (ranks are MPI processes).
///
/// A message is a tag, up to `max_metadata_size` bytes of metadata, and an
/// optional payload: one HOST `memory::Buffer`, which may have 0 bytes.
///
/// **Receiving in two steps.** `probe` returns an `Incoming` that tells the
/// message's source, tag, metadata and payload size before any memory is
/// taken for the payload. The receiver reserves memory in its own
/// `buffer_resource()` when it wants to, then calls `receive`. This is the
/// receive-side backpressure: a receiver holds as many announced messages as
/// it likes without paying for their payloads. Until it receives, the payload
/// stays with the sender: counted in the sender's resource (local backend), or
/// held at the sending process by MPI's rendezvous protocol (MPI backend;
/// payloads under MPI's eager limit, a few KiB, are buffered by MPI itself).
///
/// **Ordering.** Messages from one rank to another on one tag are probed in
/// the order they were sent and never overtake each other. Sends that race on
/// different threads are ordered as their calls happened to be serialised.
/// Nothing is promised across tags or across source ranks. Payloads may be
/// received in any order once their messages have been probed.
///
/// **Tags.** Valid tags are `[0, max_tag]`; probing takes one tag, so users
/// that take disjoint tags never see each other's messages. A user with an op
/// id and several message kinds typically uses `op_id * kinds + kind`.
///
/// **Completion and progress.** `send` and `receive` return futures that
/// complete in the background: the communicator drives its own progress (the
/// MPI backend has a progress thread; the local backend completes operations
/// inside the peer's calls), so posted operations finish even if their futures
/// are only tested, or never looked at. New messages appear only through
/// `probe`, which the receiver calls. A send completes when the payload has
/// left the sender: when the receiver has received (or dropped) the message,
/// or, for MPI messages under the eager limit, when MPI has buffered them.
/// So, as with `MPI_Send`, a rank that waits for its sends before it receives
/// can deadlock; test sends, or receive on another thread.
///
/// **Failure.** Misuse is reported at the call with `InvalidArgument` (bad
/// rank, tag, metadata size, non-HOST payload, an `Incoming` of another
/// communicator or already received) or `ReservationError` (a reservation
/// that cannot pay for the payload). A failed `receive` leaves the `Incoming`
/// and the reservation unchanged; a failed `send` frees what it was given. A
/// failed MPI call surfaces as `IoError`, from the call or from the future's
/// `get`.
///
/// Thread safety: every member function may be called concurrently from any
/// number of threads.
///
/// Lifetime: the `BufferResource` outlives the communicator; every `Incoming`
/// is received or dropped before its communicator is destroyed. Futures may
/// outlive it. Backends document what destruction does with messages in
/// flight.
class Communicator {
  public:
    virtual ~Communicator() = default;
    Communicator(Communicator const&) = delete;
    Communicator& operator=(Communicator const&) = delete;

    /// This endpoint's rank, in `[0, nranks())`.
    [[nodiscard]] Rank rank() const noexcept { return rank_; }
    /// The number of ranks; at least 1.
    [[nodiscard]] Rank nranks() const noexcept { return nranks_; }
    /// The resource that accounts this rank's memory: received payloads are
    /// buffers of it, paid for by reservations of it.
    [[nodiscard]] memory::BufferResource& buffer_resource() const noexcept { return resource_; }
    /// Whether the bytes of a payload sent to or received from `peer` may
    /// change between `send` and `receive`: true where they cross a network,
    /// false where they are handed over or copied in memory (in the process,
    /// or between processes on one host). The collectives checksum payloads
    /// end to end only where they may. A communicator that does not say
    /// otherwise keeps the default, true: the collectives checksum every
    /// chunk sent through it.
    /// Requires: `peer` in `[0, nranks())`.
    [[nodiscard]] virtual bool payloads_may_change_in_transit(Rank /*peer*/) const noexcept { return true; }

    /// Sends `metadata` and `payload` to `destination` (which may be this
    /// rank) on `tag`, without blocking. The communicator owns both until the
    /// send completes, and frees them then (the local backend hands the
    /// payload's bytes to the receiver instead).
    ///
    /// Returns a future that completes when the payload has left the sender
    /// (see "Completion" above); it completes with an `IoError` if MPI fails.
    ///
    /// Records the payload bytes under `comm.send.bytes` in the resource's
    /// statistics.
    ///
    /// Requires: `destination` in `[0, nranks())`; `tag` in `[0, max_tag]`;
    /// `metadata.size() <= max_metadata_size`; the payload, if any, is in HOST
    /// memory, or holds 0 bytes (a moved-from buffer, or an empty one of any
    /// tier, is received as an empty HOST payload).
    /// @throws InvalidArgument if a requirement is not met, or if the local
    ///         destination's communicator has been destroyed (the metadata and
    ///         payload are freed).
    /// @throws IoError if MPI refuses the send.
    Future<void> send(
        Rank destination,
        Tag tag,
        std::vector<std::byte> metadata,
        std::optional<memory::Buffer> payload = std::nullopt
    );

    /// Returns the oldest message on `tag` from `source` (or from any rank,
    /// for `any_source`) that has arrived and has not been probed yet, or
    /// nothing if there is none. Never waits for a message to arrive, and
    /// takes no memory for the payload (the MPI backend receives the small
    /// header of a matched message on the spot). A message that has only
    /// partly arrived may be returned by a later call.
    ///
    /// Requires: `tag` in `[0, max_tag]`; `source` is `any_source` or in
    /// `[0, nranks())`.
    /// @throws InvalidArgument if a requirement is not met.
    /// @throws IoError if MPI fails.
    [[nodiscard]] std::optional<Incoming> probe(Tag tag, Rank source = any_source);

    /// Receives the message announced by `incoming`, its payload into a new
    /// HOST buffer of `buffer_resource()` paid for with `*payload_size()`
    /// bytes of `reservation` (the local backend re-homes the sender's buffer
    /// without copying). A message without a payload leaves `reservation`
    /// untouched.
    ///
    /// Returns a future of the whole message. On success `incoming` is moved
    /// from; on an exception both arguments are unchanged.
    ///
    /// Records the payload bytes under `comm.receive.bytes`.
    ///
    /// Requires: `incoming` was returned by this communicator's `probe` and
    /// has not been received. If the message has a payload, `reservation` is
    /// a HOST reservation of `buffer_resource()` holding at least
    /// `*incoming.payload_size()` bytes.
    /// @throws InvalidArgument if `incoming` is of another communicator or
    ///         already received.
    /// @throws ReservationError if the reservation cannot pay for the payload.
    /// @throws OutOfMemory if the system cannot allocate the buffer.
    /// @throws IoError if MPI refuses the receive.
    [[nodiscard]] Future<Message> receive(Incoming&& incoming, memory::MemoryReservation& reservation);

    /// Receives a message whose payload is absent or has 0 bytes; the same
    /// contract as the overload above, without a reservation.
    /// @throws InvalidArgument if the payload has bytes (receive it with a
    ///         reservation), or as the overload above.
    [[nodiscard]] Future<Message> receive(Incoming&& incoming);

  protected:
    /// The endpoint of `rank` among `nranks`, accounting into `resource`.
    /// @throws InvalidArgument unless 0 <= rank < nranks.
    Communicator(Rank rank, Rank nranks, memory::BufferResource& resource);

    /// `send` after its arguments were checked.
    virtual Future<void> do_send(
        Rank destination, Tag tag, std::vector<std::byte> metadata, std::optional<memory::Buffer> payload
    ) = 0;

    /// `probe` after its arguments were checked.
    virtual std::optional<Incoming> do_probe(Tag tag, Rank source) = 0;

    /// `receive` of a payload of n > 0 bytes, after the arguments were
    /// checked: `message` is this communicator's and `reservation` is a HOST
    /// reservation of `buffer_resource()` holding at least n bytes. (Messages
    /// without payload bytes are received by `receive` itself, which drops
    /// their `pending` part.) Moves from `message` only once nothing can
    /// throw any more, so that a failed receive leaves the `Incoming` whole.
    virtual Future<Message> do_receive(
        detail::ProbedMessage& message, memory::MemoryReservation& reservation
    ) = 0;

    /// Turns a probed message into an `Incoming` of this communicator.
    [[nodiscard]] Incoming make_incoming(detail::ProbedMessage message) const noexcept {
        return Incoming(*this, std::move(message));
    }

  private:
    /// The checks and bookkeeping both `receive` overloads share.
    Future<Message> checked_receive(Incoming& incoming, memory::MemoryReservation* reservation);

    // Constant after construction.
    Rank const rank_;
    Rank const nranks_;
    memory::BufferResource& resource_;
};

}  // namespace spillway::comm
