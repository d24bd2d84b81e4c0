/// @file
/// Fuzzes `table::unpack`, the reader of the packed format that travels
/// between ranks and through spill files (docs/table_format.md).
///
/// Input: `read_packed_input`. The harness writes the right payload and
/// metadata checksums into their fields, so that the checks behind them are
/// reached. A table that unpacks must pack again into a table equal to it,
/// and two copies must unpack together into their concatenation, and pack
/// together (`pack_concatenated`) into exactly what packing it writes, with
/// or without their payload's checksum checked.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
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

/// `metadata` with the checksum of itself it should hold, where it is long
/// enough to hold one; the payload's checksum is left as it is.
std::vector<std::byte> with_right_metadata_checksum(std::vector<std::byte> metadata) {
    if (metadata.size() >= checksum_bytes) {
        auto const end = metadata.size() - checksum_bytes;
        store_checksum(metadata, end, memory::checksum(std::span(metadata).first(end)));
    }
    return metadata;
}

/// `metadata` with the checksums it should hold for `payload`, where it is
/// long enough to hold them.
std::vector<std::byte> with_right_checksums(std::span<std::byte const> metadata, std::span<std::byte const> payload) {
    std::vector<std::byte> fixed(metadata.begin(), metadata.end());
    if (fixed.size() >= payload_checksum_offset + checksum_bytes + checksum_bytes) {
        store_checksum(fixed, payload_checksum_offset, memory::checksum(payload));
    }
    return with_right_metadata_checksum(std::move(fixed));
}

/// `pieces` packed together into a vector (`pack_concatenated`).
table::PackedTable pack_concatenated(std::span<table::PackedTableView const> pieces,
                                     table::PayloadChecksum payload_checksum) {
    table::PackedTable merged;
    merged.metadata = table::pack_concatenated(
        pieces,
        [&](std::size_t payload_size) {
            merged.payload.resize(payload_size);
            return std::span(merged.payload);
        },
        payload_checksum
    );
    return merged;
}

[[noreturn]] void fail(char const* property) {
    std::fprintf(stderr, "fuzz/unpack: %s\n", property);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    auto const input = fuzz::read_packed_input(std::as_bytes(std::span(data, size)));
    auto const metadata = with_right_checksums(input.metadata, input.payload);
    // Trusted, the payload's checksum may be anything: every other check
    // must still hold.
    auto const trusted_metadata =
        with_right_metadata_checksum(std::vector<std::byte>(input.metadata.begin(), input.metadata.end()));
    table::PackedTableView const trusted_twice[] = {{trusted_metadata, input.payload},
                                                    {trusted_metadata, input.payload}};
    table::Table unpacked;
    try {
        unpacked = table::unpack(metadata, input.payload);
    } catch (CorruptData const&) {
        try {
            static_cast<void>(pack_concatenated(trusted_twice, table::PayloadChecksum::trust));
        } catch (CorruptData const&) {
            return 0;  // the documented outcome of a bad packed table
        }
        fail("a bad packed table passed as trusted");
    }
    auto const repacked = table::pack(unpacked);
    if (table::unpack(repacked.metadata, repacked.payload) != unpacked) {
        fail("a table that unpacked does not survive packing again");
    }
    table::PackedTableView const twice[] = {{metadata, input.payload}, {metadata, input.payload}};
    table::Table const copies[] = {unpacked, unpacked};
    auto const concatenation = table::Table::concatenate(copies);
    if (table::unpack_concatenated(twice) != concatenation) {
        fail("two copies unpacked together are not their concatenation");
    }
    auto const merged = pack_concatenated(twice, table::PayloadChecksum::verify);
    auto const expected = table::pack(concatenation);
    if (merged.metadata != expected.metadata || merged.payload != expected.payload) {
        fail("two copies packed together are not their concatenation packed");
    }
    auto const trusted = pack_concatenated(trusted_twice, table::PayloadChecksum::trust);
    if (trusted.metadata != expected.metadata || trusted.payload != expected.payload) {
        fail("two trusted copies packed together are not their concatenation packed");
    }
    return 0;
}
