#pragma once
/// @file
/// How each fuzz target reads its input, and how the seed writer writes one:
/// the two sides of each layout, kept together so that they agree.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <spillway/memory/codec.hpp>

#include "fuzz_bytes.hpp"

namespace spillway::fuzz {

// --- unpack: u16 metadata size, the metadata, then the payload. ---

/// A packed table as `unpack` takes it.
struct PackedInput {
    std::span<std::byte const> metadata;
    std::span<std::byte const> payload;
};

inline PackedInput read_packed_input(std::span<std::byte const> input) {
    ByteReader reader(input);
    auto const metadata_size = reader.take<std::uint16_t>();
    auto const metadata = reader.take_bytes(metadata_size);
    return {metadata, reader.rest()};
}

inline std::vector<std::byte> write_packed_input(PackedInput const& packed) {
    ByteWriter writer;
    writer.put(static_cast<std::uint16_t>(packed.metadata.size()));
    writer.put_bytes(packed.metadata);
    writer.put_bytes(packed.payload);
    return writer.bytes();
}

// --- spill_record: u8 codec (lz4 if odd, else zstd), u32 buffer size, then the stored payload. ---

/// A compressed spill payload and the size of the buffer it claims to hold.
struct SpillRecordInput {
    memory::Codec codec;
    std::uint32_t size;
    std::span<std::byte const> stored;
};

inline SpillRecordInput read_spill_record_input(std::span<std::byte const> input) {
    ByteReader reader(input);
    auto const codec = (reader.take<std::uint8_t>() & 1) != 0 ? memory::Codec::lz4 : memory::Codec::zstd;
    auto const size = reader.take<std::uint32_t>();
    return {codec, size, reader.rest()};
}

inline std::vector<std::byte> write_spill_record_input(SpillRecordInput const& record) {
    ByteWriter writer;
    writer.put(static_cast<std::uint8_t>(record.codec == memory::Codec::lz4 ? 1 : 0));
    writer.put(record.size);
    writer.put_bytes(record.stored);
    return writer.bytes();
}

// --- command_line: the arguments after the program's name, each ended by a NUL byte. ---

inline std::vector<std::string> read_command_line_input(std::span<std::byte const> input) {
    std::vector<std::string> arguments;
    std::string argument;
    for (auto const byte : input) {
        if (byte == std::byte{0}) {
            arguments.push_back(std::move(argument));
            argument.clear();
        } else {
            argument.push_back(static_cast<char>(byte));
        }
    }
    if (!argument.empty()) {
        arguments.push_back(std::move(argument));
    }
    return arguments;
}

inline std::vector<std::byte> write_command_line_input(std::span<std::string const> arguments) {
    ByteWriter writer;
    for (auto const& argument : arguments) {
        writer.put_bytes(std::as_bytes(std::span(argument)));
        writer.put(std::uint8_t{0});
    }
    return writer.bytes();
}

}  // namespace spillway::fuzz
