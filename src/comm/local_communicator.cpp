#include <spillway/comm/local_communicator.hpp>

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/core/mutex.hpp>

namespace spillway::comm {
namespace detail {
namespace {

/// The part of a local message that the receiver has not taken yet: the
/// payload, still a buffer of the sender's resource, and the sender's
/// future, which completes when this is destroyed (after the payload is
/// received or freed).
class LocalPendingReceive final : public PendingReceive {
  public:
    LocalPendingReceive(std::optional<memory::Buffer> sent_payload, std::shared_ptr<FutureState<void>> sent)
        : payload(std::move(sent_payload)), sent_(std::move(sent)) {}
    ~LocalPendingReceive() override {
        payload.reset();
        sent_->set_value({});
    }
    LocalPendingReceive(LocalPendingReceive const&) = delete;
    LocalPendingReceive& operator=(LocalPendingReceive const&) = delete;

    std::optional<memory::Buffer> payload;

  private:
    std::shared_ptr<FutureState<void>> const sent_;
};

}  // namespace

/// The queues of every rank of one group.
///
/// Thread safety: every member function may be called concurrently. Each
/// rank's mailbox has its own lock, a leaf: messages leave a mailbox before
/// they are destroyed, so no buffer or future is touched under it.
class LocalNetwork {
  public:
    LocalNetwork(Rank nranks, LocalCommunicator::PayloadFault fault)
        : nranks_(nranks),
          fault_(std::move(fault)),
          mailboxes_(std::make_unique<Mailbox[]>(static_cast<std::size_t>(nranks))) {}

    [[nodiscard]] Rank nranks() const noexcept { return nranks_; }
    /// The group's fault injection, or an empty function.
    [[nodiscard]] LocalCommunicator::PayloadFault const& fault() const noexcept { return fault_; }

    /// Queues `message` for `destination`.
    /// @throws InvalidArgument if the destination's communicator is gone.
    void deliver(Rank destination, ProbedMessage&& message) {
        Mailbox& box = mailbox(destination);
        MutexLock lock(box.mutex);
        SPILLWAY_EXPECTS(
            box.open,
            "cannot send to rank " << destination << ": its LocalCommunicator has been destroyed",
            InvalidArgument
        );
        box.queues[message.tag].push_back(std::move(message));
    }

    /// Removes and returns the oldest message for `destination` on `tag`
    /// from `source` (or any rank), if there is one.
    std::optional<ProbedMessage> take(Rank destination, Tag tag, Rank source) {
        Mailbox& box = mailbox(destination);
        MutexLock lock(box.mutex);
        auto const queue = box.queues.find(tag);
        if (queue == box.queues.end()) {
            return std::nullopt;
        }
        auto& messages = queue->second;
        auto const found = std::find_if(messages.begin(), messages.end(), [source](auto const& message) {
            return source == any_source || message.source == source;
        });
        if (found == messages.end()) {
            return std::nullopt;
        }
        std::optional<ProbedMessage> message(std::move(*found));
        messages.erase(found);
        if (messages.empty()) {
            box.queues.erase(queue);
        }
        return message;
    }

    /// Refuses later messages for `rank` and drops those waiting, which
    /// completes their sends.
    void close(Rank rank) {
        Mailbox& box = mailbox(rank);
        Queues dropped;
        {
            MutexLock lock(box.mutex);
            box.open = false;
            dropped.swap(box.queues);
        }
    }

  private:
    using Queues = std::unordered_map<Tag, std::deque<ProbedMessage>>;

    struct Mailbox {
        Mutex mutex;
        bool open SPILLWAY_GUARDED_BY(mutex) = true;
        /// Messages not probed yet, per tag in the order they were sent; no
        /// queue is empty.
        Queues queues SPILLWAY_GUARDED_BY(mutex);
    };

    Mailbox& mailbox(Rank rank) { return mailboxes_[static_cast<std::size_t>(rank)]; }

    Rank const nranks_;
    LocalCommunicator::PayloadFault const fault_;
    std::unique_ptr<Mailbox[]> const mailboxes_;  ///< one per rank
};

}  // namespace detail

std::vector<std::unique_ptr<Communicator>> LocalCommunicator::make_group(
    std::span<memory::BufferResource* const> resources, PayloadFault fault
) {
    SPILLWAY_EXPECTS(!resources.empty(), "a communicator group needs at least one rank", InvalidArgument);
    SPILLWAY_EXPECTS(
        std::none_of(resources.begin(), resources.end(), [](auto* resource) { return resource == nullptr; }),
        "every rank of a communicator group needs a BufferResource, got a null one", InvalidArgument
    );
    auto network = std::make_shared<detail::LocalNetwork>(static_cast<Rank>(resources.size()), std::move(fault));
    std::vector<std::unique_ptr<Communicator>> group;
    group.reserve(resources.size());
    for (std::size_t rank = 0; rank < resources.size(); ++rank) {
        group.push_back(
            std::make_unique<LocalCommunicator>(static_cast<Rank>(rank), network, *resources[rank])
        );
    }
    return group;
}

LocalCommunicator::LocalCommunicator(
    Rank rank, std::shared_ptr<detail::LocalNetwork> network, memory::BufferResource& resource
)
    : Communicator(rank, network->nranks(), resource), network_(std::move(network)) {}

bool LocalCommunicator::payloads_may_change_in_transit(Rank /*peer*/) const noexcept {
    return static_cast<bool>(network_->fault());
}

LocalCommunicator::~LocalCommunicator() {
    network_->close(rank());
}

Future<void> LocalCommunicator::do_send(
    Rank destination, Tag tag, std::vector<std::byte> metadata, std::optional<memory::Buffer> payload
) {
    auto sent = std::make_shared<detail::FutureState<void>>();
    std::optional<std::size_t> const payload_size =
        payload ? std::optional<std::size_t>(payload->size()) : std::nullopt;
    if (network_->fault() && payload && payload->size() > 0) {
        network_->fault()(rank(), destination, payload->data());
    }
    network_->deliver(
        destination,
        detail::ProbedMessage{
            rank(), tag, std::move(metadata), payload_size,
            std::make_unique<detail::LocalPendingReceive>(std::move(payload), sent)
        }
    );
    return Future<void>(std::move(sent));
}

std::optional<Incoming> LocalCommunicator::do_probe(Tag tag, Rank source) {
    auto message = network_->take(rank(), tag, source);
    if (!message) {
        return std::nullopt;
    }
    return make_incoming(std::move(*message));
}

Future<Message> LocalCommunicator::do_receive(
    detail::ProbedMessage& message, memory::MemoryReservation& reservation
) {
    auto& pending = static_cast<detail::LocalPendingReceive&>(*message.pending);
    auto payload = buffer_resource().adopt(std::move(*pending.payload), reservation);
    Message received{message.source, message.tag, std::move(message.metadata), std::move(payload)};
    message.pending.reset();
    return Future<Message>::ready(std::move(received));
}

}  // namespace spillway::comm
