#pragma once
/// @file
/// The in-process backend: ranks are threads of one process, and payloads
/// change hands without being copied.

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include <spillway/comm/communicator.hpp>

namespace spillway::comm {

namespace detail {
class LocalNetwork;
}

/// One rank of a group of communicators that live in one process, made by
/// `make_group`. Each rank has its own `BufferResource`.
///
/// A payload is never copied: `send` queues the sender's buffer at the
/// destination, still counted in the sender's resource, and `receive`
/// re-homes it into the receiver's resource with `BufferResource::adopt`,
/// paid for by the receiver's reservation. So each rank's accounting stays
/// its own, and a receiver that defers receives leaves the bytes charged to
/// the sender.
///
/// Completion: a send completes when the destination receives or drops the
/// message. Receives complete at once. Operations complete inside the
/// calls of the ranks involved; there is no background thread.
///
/// Destruction: messages waiting for this rank are dropped (their sends
/// complete), and later sends to this rank fail with `InvalidArgument`.
///
/// Thread safety: as `Communicator`; each rank's queue has its own lock, so
/// ranks do not contend unless they send to the same destination.
///
/// Lifetime: every rank's `BufferResource` outlives every communicator of the
/// group, because queued messages hold buffers of their sender's resource.
class LocalCommunicator final : public Communicator {
  public:
    /// For fault-injection tests: called with each payload as it is sent
    /// (in HOST memory), its source and its destination, on the sender's
    /// thread; it may change the bytes, as a faulty network would.
    using PayloadFault = std::function<void(Rank source, Rank destination, std::span<std::byte> payload)>;

    /// Creates `resources.size()` connected communicators; the one at index
    /// i is rank i and accounts into `*resources[i]`. Several ranks may share
    /// a resource. `fault`, if given, sees every payload sent in the group.
    /// Requires: at least one resource; none is null.
    /// @throws InvalidArgument if a requirement is not met.
    [[nodiscard]] static std::vector<std::unique_ptr<Communicator>> make_group(
        std::span<memory::BufferResource* const> resources, PayloadFault fault = {}
    );

    /// Drops the messages waiting for this rank; see the class comment.
    ~LocalCommunicator() override;

    /// False: a payload changes hands without a copy, so its bytes cannot
    /// change in transit; true only in a group made with a `fault`.
    [[nodiscard]] bool payloads_may_change_in_transit(Rank peer) const noexcept override;

    /// Use `make_group`. (Public only for `std::make_unique`.)
    LocalCommunicator(
        Rank rank, std::shared_ptr<detail::LocalNetwork> network, memory::BufferResource& resource
    );

  private:
    Future<void> do_send(
        Rank destination, Tag tag, std::vector<std::byte> metadata, std::optional<memory::Buffer> payload
    ) override;
    std::optional<Incoming> do_probe(Tag tag, Rank source) override;
    Future<Message> do_receive(detail::ProbedMessage& message, memory::MemoryReservation& reservation) override;

    std::shared_ptr<detail::LocalNetwork> const network_;
};

}  // namespace spillway::comm
