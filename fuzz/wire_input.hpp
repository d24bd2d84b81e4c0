#pragma once
/// @file
/// How the exchange_wire fuzz target reads its input, and how the seed
/// writer writes one (kept apart from input_layouts.hpp because it needs the
/// shuffle module's own wire format header).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "fuzz_bytes.hpp"
#include "shuffle/wire_format.hpp"

namespace spillway::fuzz {

// --- exchange_wire: messages, each the 24-byte wire header, u8 flags (bit 0:
// send the header's checksum as given, not the right one; bit 1: a payload
// follows the body), u16 body size, u32 payload size, the body, the payload. ---

/// One message a peer sends on a shuffle's tag.
struct WireMessageInput {
    shuffle::detail::WireHeader header{};
    bool keep_checksum = false;
    std::span<std::byte const> body;
    std::optional<std::span<std::byte const>> payload;
};

inline std::vector<WireMessageInput> read_wire_input(std::span<std::byte const> input, std::size_t max_messages) {
    ByteReader reader(input);
    std::vector<WireMessageInput> messages;
    while (!reader.empty() && messages.size() < max_messages) {
        WireMessageInput message;
        auto const header = reader.take_bytes(sizeof message.header);
        std::memcpy(&message.header, header.data(), header.size());
        auto const flags = reader.take<std::uint8_t>();
        auto const body_size = reader.take<std::uint16_t>();
        auto const payload_size = reader.take<std::uint32_t>();
        message.keep_checksum = (flags & 1) != 0;
        message.body = reader.take_bytes(body_size);
        if ((flags & 2) != 0) {
            message.payload = reader.take_bytes(payload_size);
        }
        messages.push_back(message);
    }
    return messages;
}

inline std::vector<std::byte> write_wire_input(std::span<WireMessageInput const> messages) {
    ByteWriter writer;
    for (auto const& message : messages) {
        writer.put_bytes(std::as_bytes(std::span(&message.header, 1)));
        writer.put(static_cast<std::uint8_t>((message.keep_checksum ? 1 : 0) | (message.payload ? 2 : 0)));
        writer.put(static_cast<std::uint16_t>(message.body.size()));
        writer.put(static_cast<std::uint32_t>(message.payload ? message.payload->size() : 0));
        writer.put_bytes(message.body);
        if (message.payload) {
            writer.put_bytes(*message.payload);
        }
    }
    return writer.bytes();
}

}  // namespace spillway::fuzz
