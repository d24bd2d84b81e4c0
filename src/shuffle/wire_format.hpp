#pragma once
/// @file
/// The wire format of the exchange: the header in front of every message's
/// metadata, and the checks a received message must pass
/// (docs/architecture.md, "shuffle/").

#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include <spillway/comm/communicator.hpp>
#include <spillway/shuffle/packed_data.hpp>
#include <spillway/shuffle/partition_owner.hpp>

namespace spillway::shuffle::detail {

/// What a message is for.
enum class MessageKind : std::uint8_t { chunk = 1, finish = 2, abandon = 3, heartbeat = 4 };

/// The exception type an abandon message carries, so that every rank raises
/// the type the failing rank raised.
enum class ErrorKind : std::uint8_t { error, invalid_argument, out_of_memory, reservation, io, corrupt, peer_timeout };

/// The first bytes of every message's metadata, in native byte order (every
/// rank runs the same build). A chunk message's metadata continues with the
/// chunk's own metadata (its body), an abandon message's with the error text.
struct WireHeader {
    MessageKind kind;
    ErrorKind error;                ///< abandon: the type of the error
    std::uint16_t inline_metadata;  ///< chunk: the bytes of its metadata at the end of the payload
    /// chunk: its partition; finish: the sender's partition count
    /// (`Layout::partitions`)
    PartitionId partition;
    std::uint64_t value;  ///< chunk: its sequence number; finish: the chunks sent
    /// chunk: `transit_checksum` of its payload and body, or 0 where the
    /// communicator's payloads cannot change in transit (and it is not
    /// checked); finish: the sender's `Layout::owner`
    std::uint64_t checksum = 0;
};

/// The bytes of the header in front of every message's metadata.
inline constexpr std::size_t wire_header_size = 24;
static_assert(sizeof(WireHeader) == wire_header_size);
static_assert(max_packed_metadata_size + wire_header_size == comm::max_metadata_size);

/// A message's metadata: `header`, then `body`.
[[nodiscard]] std::vector<std::byte> encode(WireHeader const& header, std::span<std::byte const> body = {});

/// The header at the front of `metadata`, received from `source` by the
/// collective `operation`.
/// @throws CorruptData naming both if `metadata` is shorter than a header or
///         its kind is unknown.
[[nodiscard]] WireHeader decode(std::span<std::byte const> metadata, comm::Rank source, std::string const& operation);

/// What a chunk message carries to be checked on arrival: the checksum of
/// its payload combined with that of its body.
[[nodiscard]] std::uint64_t transit_checksum(
    std::span<std::byte const> payload, std::span<std::byte const> body
) noexcept;

/// The metadata after the header. Requires: `metadata` holds a header.
[[nodiscard]] std::span<std::byte const> body_of(std::span<std::byte const> metadata) noexcept;

/// The abandon message that tells a peer why this rank gave up with `error`.
[[nodiscard]] std::vector<std::byte> abandon_message(std::exception_ptr const& error);

/// The error the abandon message `metadata` (whose header is `header`)
/// reports, of the type the peer raised, its text after `prefix`, marked
/// `Error::relayed_from_peer`.
[[nodiscard]] std::exception_ptr remote_error(
    WireHeader const& header, std::span<std::byte const> metadata, std::string prefix
);

}  // namespace spillway::shuffle::detail
