#pragma once
/// @file
/// The lz4 and zstd codecs of the disk tier, streaming through the staged
/// writer and reader so that their working memory stays bounded whatever the
/// size of the buffer.

#include <cstddef>
#include <filesystem>
#include <span>

#include <spillway/memory/codec.hpp>

#include "memory/spill_io.hpp"

namespace spillway::memory::detail {

/// The staging area the codecs need: room for the compressed bound of one
/// input piece plus a partial block.
inline constexpr std::size_t codec_staging_bytes = std::size_t{4} << 20;

/// Compresses `input` with `codec` into `writer`.
/// Requires: `codec` is not `Codec::none`; the writer's staging area has
/// `codec_staging_bytes`.
/// @throws IoError if writing fails.
void compress(Codec codec, std::span<std::byte const> input, StagedWriter& writer);

/// Decompresses the payload `reader` yields with `codec` into all of `output`.
/// Requires: `codec` is not `Codec::none`.
/// @throws CorruptData naming `path` if the payload is not a valid stream of
///         exactly `output.size()` bytes.
/// @throws IoError if reading fails.
void decompress(
    Codec codec, StagedReader& reader, std::span<std::byte> output, std::filesystem::path const& path
);

}  // namespace spillway::memory::detail
