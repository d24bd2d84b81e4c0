#include "csv_file_start.hpp"

#include <array>

namespace spillway::io::detail {

std::optional<BinaryKind> binary_kind(std::string_view start) {
    constexpr std::string_view compressed = "decompress it first (CSV input is read as plain text)";
    constexpr std::string_view other_format =
        "read it as that format (by its extension: .parquet, .arrow; or by naming the format)";
    struct Magic {
        std::string_view bytes;
        BinaryKind kind;
    };
    static constexpr std::array magics{
        Magic{"\x1f\x8b", {"gzip-compressed", compressed}},
        Magic{"\x28\xb5\x2f\xfd", {"zstd-compressed", compressed}},
        Magic{"\xfd" "7zXZ", {"xz-compressed", compressed}},
        Magic{"PK\x03\x04", {"a zip archive", compressed}},
        // The magics, and the byte (a Thrift field header) or padding after them.
        Magic{std::string_view("PAR1\x15", 5), {"a Parquet file, not CSV text", other_format}},
        Magic{std::string_view("ARROW1\0\0", 8), {"an Arrow IPC file, not CSV text", other_format}},
        Magic{"\xff\xff\xff\xff", {"an Arrow IPC stream, not CSV text", other_format}},
    };
    for (auto const& magic : magics) {
        if (start.starts_with(magic.bytes)) {
            return magic.kind;
        }
    }
    // bzip2: "BZh", the block size as a digit, then the first block's magic (the digits of pi).
    if (start.size() >= 10 && start.starts_with("BZh") && start[3] >= '1' && start[3] <= '9'
        && start.substr(4, 6) == "\x31\x41\x59\x26\x53\x59") {
        return BinaryKind{"bzip2-compressed", compressed};
    }
    return std::nullopt;
}

bool read_otherwise_at_file_start(std::string_view start) {
    if (start.empty()) {
        return false;
    }
    switch (static_cast<unsigned char>(start.front())) {
        case 0xef: return start.starts_with(byte_order_mark);
        // The first bytes of `binary_kind`'s signatures; most text begins otherwise.
        case 0x1f: case 0x28: case 0xfd: case 0xff: case 'A': case 'B': case 'P':
            return binary_kind(start).has_value();
        default: return false;
    }
}

}  // namespace spillway::io::detail
