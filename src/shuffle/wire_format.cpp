#include "shuffle/wire_format.hpp"

#include <bit>
#include <cstring>
#include <tuple>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/memory/checksum.hpp>

namespace spillway::shuffle::detail {

std::vector<std::byte> encode(WireHeader const& header, std::span<std::byte const> body) {
    std::vector<std::byte> metadata(sizeof header + body.size());
    std::memcpy(metadata.data(), &header, sizeof header);
    if (!body.empty()) {
        std::memcpy(metadata.data() + sizeof header, body.data(), body.size());
    }
    return metadata;
}

WireHeader decode(std::span<std::byte const> metadata, comm::Rank source, std::string const& operation) {
    WireHeader header{};
    SPILLWAY_EXPECTS(
        metadata.size() >= sizeof header,
        operation << ": rank " << source << " sent a message of " << metadata.size()
                  << " metadata bytes, shorter than its header",
        CorruptData
    );
    std::memcpy(&header, metadata.data(), sizeof header);
    SPILLWAY_EXPECTS(
        header.kind == MessageKind::chunk || header.kind == MessageKind::finish
            || header.kind == MessageKind::abandon || header.kind == MessageKind::heartbeat,
        operation << ": rank " << source << " sent a message of unknown kind "
                  << static_cast<int>(header.kind),
        CorruptData
    );
    return header;
}

std::uint64_t transit_checksum(std::span<std::byte const> payload, std::span<std::byte const> body) noexcept {
    return memory::checksum(payload) ^ std::rotl(memory::checksum(body), 1);
}

std::span<std::byte const> body_of(std::span<std::byte const> metadata) noexcept {
    return metadata.subspan(sizeof(WireHeader));
}

std::vector<std::byte> abandon_message(std::exception_ptr const& error) {
    auto kind = ErrorKind::error;
    std::string text = "unknown error";
    try {
        std::rethrow_exception(error);
    } catch (InvalidArgument const& e) {
        std::tie(kind, text) = std::pair{ErrorKind::invalid_argument, e.what()};
    } catch (OutOfMemory const& e) {
        std::tie(kind, text) = std::pair{ErrorKind::out_of_memory, e.what()};
    } catch (ReservationError const& e) {
        std::tie(kind, text) = std::pair{ErrorKind::reservation, e.what()};
    } catch (IoError const& e) {
        std::tie(kind, text) = std::pair{ErrorKind::io, e.what()};
    } catch (CorruptData const& e) {
        std::tie(kind, text) = std::pair{ErrorKind::corrupt, e.what()};
    } catch (PeerTimeout const& e) {
        std::tie(kind, text) = std::pair{ErrorKind::peer_timeout, e.what()};
    } catch (std::exception const& e) {
        text = e.what();
    } catch (...) {
    }
    auto const bytes = std::as_bytes(std::span(text));
    return encode(WireHeader{MessageKind::abandon, kind, 0, 0, 0}, bytes);
}

namespace {

/// A `Type` error of `message`, marked as relayed from another rank.
template <typename Type>
std::exception_ptr relayed(std::string const& message) {
    Type error(message);
    error.mark_relayed_from_peer();
    return std::make_exception_ptr(std::move(error));
}

}  // namespace

std::exception_ptr remote_error(WireHeader const& header, std::span<std::byte const> metadata, std::string prefix) {
    auto const body = body_of(metadata);
    auto message = std::move(prefix) + std::string(reinterpret_cast<char const*>(body.data()), body.size());
    switch (header.error) {
        case ErrorKind::invalid_argument: return relayed<InvalidArgument>(message);
        case ErrorKind::out_of_memory: return relayed<OutOfMemory>(message);
        case ErrorKind::reservation: return relayed<ReservationError>(message);
        case ErrorKind::io: return relayed<IoError>(message);
        case ErrorKind::corrupt: return relayed<CorruptData>(message);
        case ErrorKind::peer_timeout: return relayed<PeerTimeout>(message);
        case ErrorKind::error: break;
    }
    return relayed<Error>(message);
}

}  // namespace spillway::shuffle::detail
