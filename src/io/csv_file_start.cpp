#include "csv_file_start.hpp"

#include <array>

namespace spillway::io::detail {
namespace {

constexpr std::string_view compressed = "decompress it first (CSV input is read as plain text)";
constexpr std::string_view other_format =
    "read it as that format (by its extension: .parquet, .arrow; or by naming the format)";

/// The first bytes of a kind of binary file.
struct Magic {
    std::string_view bytes;
    BinaryKind kind;
};

constexpr std::array magics{
    Magic{"\x1f\x8b", {"gzip-compressed", compressed}},
    Magic{"\x28\xb5\x2f\xfd", {"zstd-compressed", compressed}},
    Magic{"\xfd" "7zXZ", {"xz-compressed", compressed}},
    Magic{"PK\x03\x04", {"a zip archive", compressed}},
    // The magics, and the byte (a Thrift field header) or padding after them.
    Magic{std::string_view("PAR1\x15", 5), {"a Parquet file, not CSV text", other_format}},
    Magic{std::string_view("ARROW1\0\0", 8), {"an Arrow IPC file, not CSV text", other_format}},
    Magic{"\xff\xff\xff\xff", {"an Arrow IPC stream, not CSV text", other_format}},
};

/// bzip2's first bytes: "BZh", then the block size as a digit and the first
/// block's magic (the digits of pi).
constexpr std::string_view bzip2 = "BZh";

/// Whether a file beginning with each byte value may be read otherwise than
/// as text: the first bytes of `magics`, of `bzip2` and of the byte order
/// mark.
constexpr std::array<bool, 256> first_bytes = [] {
    std::array<bool, 256> first{};
    for (auto const& magic : magics) {
        first[static_cast<unsigned char>(magic.bytes.front())] = true;
    }
    first[static_cast<unsigned char>(bzip2.front())] = true;
    first[static_cast<unsigned char>(byte_order_mark.front())] = true;
    return first;
}();

}  // namespace

std::optional<BinaryKind> binary_kind(std::string_view start) {
    for (auto const& magic : magics) {
        if (start.starts_with(magic.bytes)) {
            return magic.kind;
        }
    }
    if (start.size() >= 10 && start.starts_with(bzip2) && start[3] >= '1' && start[3] <= '9'
        && start.substr(4, 6) == "\x31\x41\x59\x26\x53\x59") {
        return BinaryKind{"bzip2-compressed", compressed};
    }
    return std::nullopt;
}

bool read_otherwise_at_file_start(std::string_view start) {
    // Most text begins with none of the first bytes.
    return !start.empty() && first_bytes[static_cast<unsigned char>(start.front())]
        && (start.starts_with(byte_order_mark) || binary_kind(start).has_value());
}

}  // namespace spillway::io::detail
