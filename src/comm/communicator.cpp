#include <spillway/comm/communicator.hpp>

#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>

namespace spillway::comm {
namespace {

void check_tag(Tag tag) {
    SPILLWAY_EXPECTS(
        tag >= 0 && tag <= max_tag,
        "tag " << tag << " is outside [0, " << max_tag << "] (comm::max_tag)", InvalidArgument
    );
}

}  // namespace

Communicator::Communicator(Rank rank, Rank nranks, memory::BufferResource& resource)
    : rank_(rank), nranks_(nranks), resource_(resource) {
    SPILLWAY_EXPECTS(
        nranks > 0 && rank >= 0 && rank < nranks,
        "rank " << rank << " is not one of " << nranks << " ranks", InvalidArgument
    );
}

Future<void> Communicator::send(
    Rank destination, Tag tag, std::vector<std::byte> metadata, std::optional<memory::Buffer> payload
) {
    SPILLWAY_EXPECTS(
        destination >= 0 && destination < nranks_,
        "destination rank " << destination << " is outside [0, " << nranks_ << ")", InvalidArgument
    );
    check_tag(tag);
    SPILLWAY_EXPECTS(
        metadata.size() <= max_metadata_size,
        "metadata of " << format_bytes(metadata.size()) << " exceeds comm::max_metadata_size ("
                       << format_bytes(max_metadata_size) << "); send bulk data as the payload",
        InvalidArgument
    );
    SPILLWAY_EXPECTS(
        !payload || payload->size() == 0 || payload->mem_type() == memory::MemoryType::HOST,
        "a payload must be in HOST memory, this one is in " << payload->mem_type()
            << "; move it to HOST with BufferResource::move first",
        InvalidArgument
    );
    auto const bytes = payload ? payload->size() : 0;
    auto future = do_send(destination, tag, std::move(metadata), std::move(payload));
    resource_.statistics().add_bytes("comm.send.bytes", bytes);
    return future;
}

std::optional<Incoming> Communicator::probe(Tag tag, Rank source) {
    check_tag(tag);
    SPILLWAY_EXPECTS(
        source == any_source || (source >= 0 && source < nranks_),
        "source rank " << source << " is neither comm::any_source nor in [0, " << nranks_ << ")",
        InvalidArgument
    );
    return do_probe(tag, source);
}

Future<Message> Communicator::receive(Incoming&& incoming, memory::MemoryReservation& reservation) {
    return checked_receive(incoming, &reservation);
}

Future<Message> Communicator::receive(Incoming&& incoming) {
    return checked_receive(incoming, nullptr);
}

Future<Message> Communicator::checked_receive(
    Incoming& incoming, memory::MemoryReservation* reservation
) {
    SPILLWAY_EXPECTS(
        incoming.owner_ == this,
        (incoming.owner_ == nullptr ? "this Incoming has already been received (or moved from)"
                                    : "this Incoming was probed by another communicator"),
        InvalidArgument
    );
    auto& message = incoming.message_;
    auto const bytes = message.payload_size.value_or(0);
    Future<Message> future;
    if (bytes == 0) {
        std::optional<memory::Buffer> payload;
        if (message.payload_size) {
            auto nothing = resource_.try_reserve(memory::MemoryType::HOST, 0);
            payload = resource_.make_buffer(0, nothing);
        }
        future = Future<Message>::ready(
            Message{message.source, message.tag, std::move(message.metadata), std::move(payload)}
        );
        message.pending.reset();
    } else {
        SPILLWAY_EXPECTS(
            reservation != nullptr,
            "the message has a payload of " << format_bytes(bytes)
                                            << "; receive it with a reservation of that many bytes",
            InvalidArgument
        );
        SPILLWAY_EXPECTS(
            reservation->resource() == &resource_,
            "receive needs a reservation of the communicator's BufferResource", ReservationError
        );
        SPILLWAY_EXPECTS(
            reservation->mem_type() == memory::MemoryType::HOST,
            "receive needs a HOST reservation, got one in " << reservation->mem_type(),
            ReservationError
        );
        SPILLWAY_EXPECTS(
            reservation->size() >= bytes,
            "receive needs " << format_bytes(bytes) << " for the payload but the reservation holds "
                             << format_bytes(reservation->size()),
            ReservationError
        );
        future = do_receive(message, *reservation);
    }
    incoming.owner_ = nullptr;
    resource_.statistics().add_bytes("comm.receive.bytes", bytes);
    return future;
}

}  // namespace spillway::comm
