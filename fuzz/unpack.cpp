/// @file
/// Fuzzes `table::unpack`, the reader of the packed format that travels
/// between ranks and through spill files (docs/table_format.md).
///
/// Input: `read_packed_input`. The harness writes the right payload and
/// metadata checksums into their fields, so that the checks behind them are
/// reached. A table that unpacks must pack again into a table equal to it,
/// and two copies must unpack together into their concatenation.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/memory/checksum.hpp>
#include <spillway/table/packed_table.hpp>

#include "input_layouts.hpp"

namespace {

using namespace spillway;

/// Where the metadata holds the payload's checksum, and the bytes of the
/// metadata's own checksum at its end.
constexpr std::size_t payload_checksum_offset = 32;
constexpr std::size_t checksum_bytes = 8;

void store_checksum(std::vector<std::byte>& bytes, std::size_t offset, std::uint64_t checksum) {
    std::memcpy(bytes.data() + offset, &checksum, sizeof checksum);
}

/// `metadata` with the checksums it should hold for `payload`, where it is
/// long enough to hold them.
std::vector<std::byte> with_right_checksums(std::span<std::byte const> metadata, std::span<std::byte const> payload) {
    std::vector<std::byte> fixed(metadata.begin(), metadata.end());
    if (fixed.size() >= payload_checksum_offset + checksum_bytes + checksum_bytes) {
        store_checksum(fixed, payload_checksum_offset, memory::checksum(payload));
    }
    if (fixed.size() >= checksum_bytes) {
        auto const end = fixed.size() - checksum_bytes;
        store_checksum(fixed, end, memory::checksum(std::span(fixed).first(end)));
    }
    return fixed;
}

[[noreturn]] void fail(char const* property) {
    std::fprintf(stderr, "fuzz/unpack: %s\n", property);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    auto const input = fuzz::read_packed_input(std::as_bytes(std::span(data, size)));
    auto const metadata = with_right_checksums(input.metadata, input.payload);
    table::Table unpacked;
    try {
        unpacked = table::unpack(metadata, input.payload);
    } catch (CorruptData const&) {
        return 0;  // the documented outcome of a bad packed table
    }
    auto const repacked = table::pack(unpacked);
    if (table::unpack(repacked.metadata, repacked.payload) != unpacked) {
        fail("a table that unpacked does not survive packing again");
    }
    table::PackedTableView const twice[] = {{metadata, input.payload}, {metadata, input.payload}};
    table::Table const copies[] = {unpacked, unpacked};
    if (table::unpack_concatenated(twice) != table::Table::concatenate(copies)) {
        fail("two copies unpacked together are not their concatenation");
    }
    return 0;
}
