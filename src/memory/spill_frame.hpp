#pragma once
/// @file
/// The header of a spill file and the checksum that protects it.
/// docs/spill_format.md describes the format byte by byte.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

#include <xxhash.h>

#include <spillway/memory/buffer.hpp>
#include <spillway/memory/codec.hpp>

namespace spillway::memory::detail {

/// The bytes the encoded header takes at the start of a spill file.
inline constexpr std::size_t frame_header_size = 64;
/// Where the payload starts: after a header block padded to the direct-I/O
/// alignment, so the payload can be written straight from a buffer.
inline constexpr std::uint64_t frame_payload_offset = host_buffer_alignment;
/// The format version this code writes and reads.
inline constexpr std::uint16_t frame_version = 1;

/// What a spill file's header records about the buffer in it.
struct FrameHeader {
    Codec codec = Codec::none;
    std::uint64_t size = 0;              ///< the buffer's bytes, uncompressed
    std::uint64_t stored_size = 0;       ///< the payload's bytes as stored (after the codec)
    std::uint64_t payload_checksum = 0;  ///< XXH3-64 of the stored payload

    friend bool operator==(FrameHeader const&, FrameHeader const&) = default;
};

/// Encodes `header` (with magic, version and header checksum) into `out`.
void encode_frame_header(FrameHeader const& header, std::span<std::byte, frame_header_size> out);

/// Decodes the header in `in`, read from the file at `path`.
/// @throws CorruptData naming `path` if the magic, version, header checksum,
///         codec or payload offset is wrong.
FrameHeader decode_frame_header(
    std::span<std::byte const, frame_header_size> in, std::filesystem::path const& path
);

/// XXH3-64 of `bytes`, the checksum every frame carries.
std::uint64_t checksum(std::span<std::byte const> bytes) noexcept;

/// XXH3-64 of bytes given piece by piece.
///
/// Thread safety: externally synchronised.
class StreamingChecksum {
  public:
    StreamingChecksum();
    ~StreamingChecksum();
    StreamingChecksum(StreamingChecksum const&) = delete;
    StreamingChecksum& operator=(StreamingChecksum const&) = delete;

    /// Adds `bytes` to the checksummed stream.
    void update(std::span<std::byte const> bytes) noexcept;
    /// The checksum of everything added so far.
    [[nodiscard]] std::uint64_t digest() const noexcept;

  private:
    struct FreeState {
        void operator()(XXH3_state_t* state) const noexcept { XXH3_freeState(state); }
    };
    std::unique_ptr<XXH3_state_t, FreeState> state_;
};

}  // namespace spillway::memory::detail
