#include <spillway/comm/mpi_communicator.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <thread>

#include <spillway/core/deadline.hpp>
#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>

#include "comm/mpi_progress.hpp"
#include "comm/mpi_support.hpp"

namespace spillway::comm {
namespace detail {

/// The unreceived payload messages of a probed message. Dropping it
/// discards them.
class MpiPendingReceive final : public PendingReceive {
  public:
    MpiPendingReceive(
        MpiCommunicator& communicator, std::size_t payload_size, std::size_t part_size,
        std::vector<MPI_Message> parts
    )
        : communicator_(communicator),
          payload_size_(payload_size),
          part_size_(part_size),
          parts_(std::move(parts)) {
        communicator_.live_incomings_.fetch_add(1, std::memory_order_relaxed);
    }
    ~MpiPendingReceive() override {
        if (!parts_.empty()) {
            communicator_.discard(payload_size_, std::move(parts_), part_size_);
        }
        communicator_.live_incomings_.fetch_sub(1, std::memory_order_relaxed);
    }
    MpiPendingReceive(MpiPendingReceive const&) = delete;
    MpiPendingReceive& operator=(MpiPendingReceive const&) = delete;

    [[nodiscard]] std::size_t part_size() const noexcept { return part_size_; }
    /// The matched payload messages; afterwards nothing is left to discard.
    std::vector<MPI_Message> take_parts() noexcept { return std::exchange(parts_, {}); }

  private:
    MpiCommunicator& communicator_;
    std::size_t const payload_size_;
    std::size_t const part_size_;
    std::vector<MPI_Message> parts_;
};

}  // namespace detail

namespace {

/// The MPI tags of a spillway tag: its header and its payload messages.
int header_tag(Tag tag) noexcept { return 2 * tag; }
int payload_tag(Tag tag) noexcept { return 2 * tag + 1; }

/// The header message: the payload's size (u64), the size of its parts
/// (u64, 0 without payload), whether there is a payload (u8), then the
/// metadata. Native byte order: every rank runs the same build.
constexpr std::size_t header_prefix = 2 * sizeof(std::uint64_t) + 1;

std::vector<std::byte> encode_header(
    std::optional<std::size_t> payload_size, std::size_t part_size, std::vector<std::byte> const& metadata
) {
    std::vector<std::byte> header(header_prefix + metadata.size());
    std::uint64_t const size = payload_size.value_or(0);
    std::uint64_t const part = payload_size ? part_size : 0;
    std::memcpy(header.data(), &size, sizeof size);
    std::memcpy(header.data() + sizeof size, &part, sizeof part);
    header[2 * sizeof(std::uint64_t)] = std::byte{payload_size.has_value()};
    std::copy(metadata.begin(), metadata.end(), header.begin() + header_prefix);
    return header;
}

/// The number of payload messages a payload of `size` bytes travels in.
std::size_t part_count(std::size_t size, std::size_t part_size) noexcept {
    return size == 0 ? 0 : (size - 1) / part_size + 1;
}

/// Calls `post(index, offset, length)` for each payload message of a
/// payload of `size` bytes; aborts if one throws, because a message whose
/// parts are posted only partly cannot be completed or taken back.
template <typename Post>
void post_parts(std::size_t size, std::size_t part_size, Post post) noexcept {
    try {
        for (std::size_t index = 0, offset = 0; offset < size; ++index, offset += part_size) {
            post(index, offset, std::min(part_size, size - offset));
        }
    } catch (std::exception const& error) {
        SPILLWAY_FATAL("a message was posted only in part and cannot continue: " << error.what());
    }
}

/// A send in flight: owns the header and the payload until it completes.
class SendOperation final : public detail::MpiOperation {
  public:
    SendOperation(std::vector<std::byte> header, std::optional<memory::Buffer> payload)
        : header_(std::move(header)), payload_(std::move(payload)) {}

    [[nodiscard]] std::span<std::byte const> header() const noexcept { return header_; }
    [[nodiscard]] std::span<std::byte const> payload() const {
        // An empty payload may be a moved-from or DISK buffer, whose bytes
        // cannot be asked for.
        return payload_ && payload_->size() > 0 ? payload_->data() : std::span<std::byte const>();
    }
    [[nodiscard]] Future<void> future() const { return Future<void>(state_); }

    void finish(std::exception_ptr error) noexcept override {
        // Free the bytes before waking waiters, so they see the accounting back.
        payload_.reset();
        header_ = std::vector<std::byte>();  // `= {}` would keep the capacity
        error ? state_->set_error(std::move(error)) : state_->set_value({});
    }

  private:
    std::vector<std::byte> header_;
    std::optional<memory::Buffer> payload_;
    std::shared_ptr<detail::FutureState<void>> const state_ =
        std::make_shared<detail::FutureState<void>>();
};

/// A receive in flight: owns the message whose payload MPI is writing.
class ReceiveOperation final : public detail::MpiOperation {
  public:
    explicit ReceiveOperation(Message message) : message_(std::move(message)) {}

    [[nodiscard]] std::span<std::byte> payload() { return message_.payload->data(); }
    [[nodiscard]] Future<Message> future() const { return Future<Message>(state_); }

    void finish(std::exception_ptr error) noexcept override {
        if (error) {
            message_.payload.reset();
            state_->set_error(std::move(error));
        } else {
            state_->set_value(std::move(message_));
        }
    }

  private:
    Message message_;
    std::shared_ptr<detail::FutureState<Message>> const state_ =
        std::make_shared<detail::FutureState<Message>>();
};

/// By rank of `comm` (of `nranks`): whether it shares this process's host,
/// as MPI sees hosts (`MPI_COMM_TYPE_SHARED`). Collective over `comm`.
std::vector<bool> ranks_on_this_host(MPI_Comm comm, Rank nranks) {
    MPI_Comm host = MPI_COMM_NULL;
    detail::check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host), "MPI_Comm_split_type");
    MPI_Group host_group = MPI_GROUP_NULL;
    MPI_Group group = MPI_GROUP_NULL;
    detail::check_mpi(MPI_Comm_group(host, &host_group), "MPI_Comm_group");
    detail::check_mpi(MPI_Comm_group(comm, &group), "MPI_Comm_group");
    int size = 0;
    detail::check_mpi(MPI_Group_size(host_group, &size), "MPI_Group_size");
    std::vector<int> host_ranks(static_cast<std::size_t>(size));
    std::iota(host_ranks.begin(), host_ranks.end(), 0);
    std::vector<int> ranks(host_ranks.size());
    detail::check_mpi(
        MPI_Group_translate_ranks(host_group, size, host_ranks.data(), group, ranks.data()), "MPI_Group_translate_ranks"
    );
    MPI_Group_free(&host_group);
    MPI_Group_free(&group);
    MPI_Comm_free(&host);
    std::vector<bool> on_this_host(static_cast<std::size_t>(nranks), false);
    for (auto const rank : ranks) {
        on_this_host[static_cast<std::size_t>(rank)] = true;
    }
    return on_this_host;
}

}  // namespace

MpiCommunicator::Endpoint MpiCommunicator::duplicate(MPI_Comm comm, MpiConfig const& config) {
    SPILLWAY_EXPECTS(
        config.max_message_bytes >= 1 && config.max_message_bytes <= INT_MAX,
        "comm_mpi_max_message_bytes (MpiConfig::max_message_bytes) must be from 1 to " << INT_MAX
            << " (INT_MAX), got " << config.max_message_bytes,
        InvalidArgument
    );
    int initialized = 0;
    int finalized = 0;
    detail::check_mpi(MPI_Initialized(&initialized), "MPI_Initialized");
    detail::check_mpi(MPI_Finalized(&finalized), "MPI_Finalized");
    SPILLWAY_EXPECTS(
        initialized != 0 && finalized == 0,
        "MpiCommunicator needs MPI to be initialised and not finalised; create an MpiEnvironment first",
        InvalidArgument
    );
    int thread_level = MPI_THREAD_SINGLE;
    detail::check_mpi(MPI_Query_thread(&thread_level), "MPI_Query_thread");
    SPILLWAY_EXPECTS(
        thread_level == MPI_THREAD_MULTIPLE,
        "MPI was initialised with thread level " << thread_level << "; MpiCommunicator needs "
            << "MPI_THREAD_MULTIPLE: initialise MPI with an MpiEnvironment or with "
            << "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...)",
        InvalidArgument
    );

    // MPI_TAG_UB is an attribute of MPI_COMM_WORLD (a communicator made by a
    // split, or MPI_COMM_SELF, need not carry it); MPI guarantees at least
    // 32767, which is what comm::max_tag is derived from.
    int* tag_upper_bound = nullptr;
    int has_bound = 0;
    detail::check_mpi(
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, static_cast<void*>(&tag_upper_bound), &has_bound),
        "MPI_Comm_get_attr"
    );
    SPILLWAY_ASSERT(
        has_bound != 0 && *tag_upper_bound >= payload_tag(max_tag), "MPI_TAG_UB is below 32767"
    );

    Endpoint endpoint{};
    detail::check_mpi(MPI_Comm_dup(comm, &endpoint.comm), "MPI_Comm_dup");
    detail::check_mpi(MPI_Comm_set_errhandler(endpoint.comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    detail::check_mpi(MPI_Comm_rank(endpoint.comm, &endpoint.rank), "MPI_Comm_rank");
    detail::check_mpi(MPI_Comm_size(endpoint.comm, &endpoint.nranks), "MPI_Comm_size");
    endpoint.on_this_host = ranks_on_this_host(endpoint.comm, endpoint.nranks);
    return endpoint;
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, memory::BufferResource& resource, MpiConfig config)
    : MpiCommunicator(duplicate(comm, config), resource, config) {}

MpiCommunicator::MpiCommunicator(Endpoint endpoint, memory::BufferResource& resource, MpiConfig config)
    : Communicator(endpoint.rank, endpoint.nranks, resource),
      config_(std::move(config)),
      comm_(endpoint.comm),
      on_this_host_(std::move(endpoint.on_this_host)),
      progress_(std::make_unique<detail::MpiProgress>()) {
    detail::live_mpi_communicators().fetch_add(1, std::memory_order_relaxed);
}

bool MpiCommunicator::payloads_may_change_in_transit(Rank peer) const noexcept {
    return !on_this_host_[static_cast<std::size_t>(peer)];
}

MpiCommunicator::~MpiCommunicator() {
    auto const deadline = deadline_after(std::chrono::steady_clock::now(), config_.shutdown_timeout);
    std::vector<Incoming> dropped;
    {
        MutexLock lock(match_mutex_);
        for (auto& [channel, matches] : partial_matches_) {
            for (auto& match : matches) {
                // The sender posted the payload messages with the header, so
                // they arrive; wait for them to drop the message whole.
                while (!match_parts(match)) {
                    if (std::chrono::steady_clock::now() > deadline) {
                        SPILLWAY_FATAL(
                            "MpiCommunicator destroyed while the payload of a message from rank "
                            << channel.second << " on tag " << channel.first << " did not arrive within "
                            << "comm_mpi_shutdown_timeout"
                        );
                    }
                    std::this_thread::yield();
                }
                dropped.push_back(to_incoming(std::move(match)));
            }
        }
        partial_matches_.clear();
    }
    dropped.clear();
    if (auto const live = live_incomings_.load(std::memory_order_relaxed); live != 0) {
        SPILLWAY_FATAL(
            "MpiCommunicator destroyed while " << live
                << " Incoming message(s) it returned are alive; receive or drop them first"
        );
    }
    auto const wait = std::max(deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration{});
    if (auto const unfinished = progress_->drain(wait); unfinished != 0) {
        SPILLWAY_FATAL(
            "MpiCommunicator of rank " << rank() << " destroyed while " << unfinished
                << " send(s) or receive(s) did not complete within comm_mpi_shutdown_timeout; every "
                << "message must be probed and received by its destination before either side "
                << "destroys its communicator"
        );
    }
    progress_.reset();
    MPI_Comm_free(&comm_);
    detail::live_mpi_communicators().fetch_sub(1, std::memory_order_relaxed);
}

Future<void> MpiCommunicator::do_send(
    Rank destination, Tag tag, std::vector<std::byte> metadata, std::optional<memory::Buffer> payload
) {
    std::optional<std::size_t> const payload_size =
        payload ? std::optional<std::size_t>(payload->size()) : std::nullopt;
    auto const part_size = config_.max_message_bytes;
    auto operation = std::make_unique<SendOperation>(
        encode_header(payload_size, part_size, metadata), std::move(payload)
    );
    auto const header = operation->header();
    auto const bytes = operation->payload();
    std::vector<MPI_Request> requests(1 + part_count(bytes.size(), part_size), MPI_REQUEST_NULL);
    {
        MutexLock lock(send_mutex_);
        detail::check_mpi(
            MPI_Isend(header.data(), static_cast<int>(header.size()), MPI_BYTE, destination,
                      header_tag(tag), comm_, &requests[0]),
            "MPI_Isend"
        );
        post_parts(bytes.size(), part_size, [&](std::size_t index, std::size_t offset, std::size_t length) {
            detail::check_mpi(
                MPI_Isend(bytes.data() + offset, static_cast<int>(length), MPI_BYTE, destination,
                          payload_tag(tag), comm_, &requests[1 + index]),
                "MPI_Isend"
            );
        });
    }
    auto future = operation->future();
    progress_->submit(std::move(operation), std::move(requests));
    return future;
}

std::optional<Incoming> MpiCommunicator::do_probe(Tag tag, Rank source) {
    MutexLock lock(match_mutex_);
    if (auto incoming = complete_partial_match(tag, source)) {
        return incoming;
    }
    int found = 0;
    MPI_Message handle = MPI_MESSAGE_NULL;
    MPI_Status status;
    detail::check_mpi(
        MPI_Improbe(source == any_source ? MPI_ANY_SOURCE : source, header_tag(tag), comm_, &found,
                    &handle, &status),
        "MPI_Improbe"
    );
    if (found == 0) {
        return std::nullopt;
    }
    int count = 0;
    detail::check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
    std::vector<std::byte> header(static_cast<std::size_t>(count));
    // The header is small and already matched; receiving it here keeps
    // probing simple.
    detail::check_mpi(MPI_Mrecv(header.data(), count, MPI_BYTE, &handle, MPI_STATUS_IGNORE), "MPI_Mrecv");
    Rank const sender = status.MPI_SOURCE;
    SPILLWAY_EXPECTS(
        header.size() >= header_prefix,
        "a message header of " << header.size() << " bytes from rank " << sender << " on tag " << tag
                               << " is shorter than " << header_prefix << " bytes",
        CorruptData
    );
    std::uint64_t payload_size = 0;
    std::uint64_t part_size = 0;
    std::memcpy(&payload_size, header.data(), sizeof payload_size);
    std::memcpy(&part_size, header.data() + sizeof payload_size, sizeof part_size);
    bool const has_payload = header[2 * sizeof(std::uint64_t)] != std::byte{0};
    SPILLWAY_EXPECTS(
        !has_payload || payload_size == 0 || part_size > 0,
        "a message header from rank " << sender << " on tag " << tag << " announces "
                                      << payload_size << " payload bytes in parts of 0 bytes",
        CorruptData
    );
    PartialMatch match{
        detail::ProbedMessage{
            sender, tag, std::vector<std::byte>(header.begin() + header_prefix, header.end()),
            has_payload ? std::optional<std::size_t>(payload_size) : std::nullopt, nullptr
        },
        part_size, part_count(payload_size, part_size), {}
    };
    partial_matches_[{tag, sender}].push_back(std::move(match));
    return complete_partial_match(tag, sender);
}

std::optional<Incoming> MpiCommunicator::complete_partial_match(Tag tag, Rank source) {
    auto channel = source == any_source ? partial_matches_.lower_bound({tag, 0})
                                        : partial_matches_.find({tag, source});
    auto const last = source == any_source ? partial_matches_.lower_bound({tag + 1, 0})
                      : channel == partial_matches_.end() ? channel
                                                          : std::next(channel);
    for (; channel != last; ++channel) {
        auto& matches = channel->second;
        if (!match_parts(matches.front())) {
            continue;
        }
        auto match = std::move(matches.front());
        matches.pop_front();
        if (matches.empty()) {
            partial_matches_.erase(channel);
        }
        return to_incoming(std::move(match));
    }
    return std::nullopt;
}

bool MpiCommunicator::match_parts(PartialMatch& match) {
    auto const& message = match.message;
    while (match.parts.size() < match.part_count) {
        int found = 0;
        MPI_Message part = MPI_MESSAGE_NULL;
        MPI_Status status;
        detail::check_mpi(
            MPI_Improbe(message.source, payload_tag(message.tag), comm_, &found, &part, &status),
            "MPI_Improbe"
        );
        if (found == 0) {
            return false;
        }
        int count = 0;
        detail::check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
        auto const offset = match.parts.size() * match.part_size;
        SPILLWAY_ASSERT(
            static_cast<std::size_t>(count) == std::min(match.part_size, *message.payload_size - offset),
            "payload message of " << count << " bytes from rank " << message.source
                                  << " does not fit its header"
        );
        match.parts.push_back(part);
    }
    return true;
}

Incoming MpiCommunicator::to_incoming(PartialMatch&& match) {
    if (!match.parts.empty()) {
        match.message.pending = std::make_unique<detail::MpiPendingReceive>(
            *this, *match.message.payload_size, match.part_size, std::move(match.parts)
        );
    }
    return make_incoming(std::move(match.message));
}

Future<Message> MpiCommunicator::do_receive(
    detail::ProbedMessage& message, memory::MemoryReservation& reservation
) {
    auto& pending = static_cast<detail::MpiPendingReceive&>(*message.pending);
    auto payload = buffer_resource().make_buffer(*message.payload_size, reservation);
    auto const part_size = pending.part_size();
    auto parts = pending.take_parts();
    message.pending.reset();
    return post_receive(
        Message{message.source, message.tag, std::move(message.metadata), std::move(payload)},
        std::move(parts), part_size
    );
}

Future<Message> MpiCommunicator::post_receive(
    Message message, std::vector<MPI_Message> parts, std::size_t part_size
) {
    auto operation = std::make_unique<ReceiveOperation>(std::move(message));
    auto const bytes = operation->payload();
    std::vector<MPI_Request> requests(parts.size(), MPI_REQUEST_NULL);
    post_parts(bytes.size(), part_size, [&](std::size_t index, std::size_t offset, std::size_t length) {
        detail::check_mpi(
            MPI_Imrecv(bytes.data() + offset, static_cast<int>(length), MPI_BYTE, &parts[index],
                       &requests[index]),
            "MPI_Imrecv"
        );
    });
    auto future = operation->future();
    progress_->submit(std::move(operation), std::move(requests));
    return future;
}

void MpiCommunicator::discard(
    std::size_t payload_size, std::vector<MPI_Message> parts, std::size_t part_size
) noexcept {
    try {
        MutexLock lock(discard_mutex_);
        auto const largest_part = std::min(payload_size, part_size);
        if (!discard_buffer_ || discard_buffer_->size() < largest_part) {
            discard_buffer_.reset();
            auto& resource = buffer_resource();
            auto reservation = resource.reserve(memory::MemoryType::HOST, largest_part, memory::AllowOverbooking::yes);
            discard_buffer_ = resource.make_buffer(largest_part, reservation);
        }
        auto const scratch = discard_buffer_->data();
        post_parts(payload_size, part_size, [&](std::size_t index, std::size_t, std::size_t length) {
            detail::check_mpi(
                MPI_Mrecv(scratch.data(), static_cast<int>(length), MPI_BYTE, &parts[index], MPI_STATUS_IGNORE),
                "MPI_Mrecv"
            );
        });
        // relaxed: as in the destructor; the caller's own Incoming counts one
        if (live_incomings_.load(std::memory_order_relaxed) == 1) {
            discard_buffer_.reset();
        }
    } catch (std::exception const& error) {
        SPILLWAY_FATAL(
            "cannot drop a message with a payload of " << format_bytes(payload_size) << ": " << error.what()
        );
    }
}

}  // namespace spillway::comm
