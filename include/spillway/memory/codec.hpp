#pragma once
/// @file
/// The compression codecs a buffer can be written to disk with.

#include <iosfwd>
#include <string_view>

namespace spillway::memory {

/// How the disk tier encodes a buffer's bytes in its spill file. A codec is a
/// property of the move to DISK, not a tier: a buffer counts its uncompressed
/// size in every tier whatever the codec.
///
/// - `none`: the bytes as they are, written with direct I/O straight from the
///   buffer (no copy). The fastest on a fast disk and for incompressible data.
/// - `lz4`: LZ4 frames; cheap to compress, helps on slow disks.
/// - `zstd`: Zstandard at level 1; smaller files for more CPU.
enum class Codec { none, lz4, zstd };

/// The codec's name in lower case, as options spell it: `none`, `lz4`, `zstd`.
std::string_view to_string(Codec codec) noexcept;

/// The codec named `name` (as `to_string` spells it).
/// @throws InvalidArgument naming the valid codecs otherwise.
Codec parse_codec(std::string_view name);

/// Writes `to_string(codec)`.
std::ostream& operator<<(std::ostream& out, Codec codec);

}  // namespace spillway::memory
