#pragma once
/// @file
/// What the first bytes of a CSV file say before its text: a byte order
/// mark, which the reader drops, or the signature of a file that is not
/// text, which it refuses.

#include <optional>
#include <string_view>

namespace spillway::io::detail {

/// UTF-8's byte order mark.
inline constexpr std::string_view byte_order_mark = "\xef\xbb\xbf";

/// What a file that is not text is, by the bytes it starts with, and what
/// to do about it.
struct BinaryKind {
    std::string_view what;
    std::string_view remedy;
};

/// The kind of binary file `start` (a file's first bytes) begins: compressed
/// (gzip, zstd, xz, bzip2, zip), Parquet or Arrow IPC; nothing if it may be
/// text.
[[nodiscard]] std::optional<BinaryKind> binary_kind(std::string_view start);

/// Whether a file that began with `start` would not be read as text from
/// its first byte: it begins with a byte order mark or like a binary file.
[[nodiscard]] bool read_otherwise_at_file_start(std::string_view start);

}  // namespace spillway::io::detail
