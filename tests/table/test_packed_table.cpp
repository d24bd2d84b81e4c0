#include <spillway/table/packed_table.hpp>

#include <cstring>
#include <random>
#include <string>

#include <xxhash.h>

#include <common/error_matchers.hpp>

#include <gtest/gtest.h>

#include "random_table.hpp"

using namespace spillway;
using namespace spillway::table;
using spillway::table::test::random_table;

namespace {

Table round_trip(Table const& table) {
    auto const packed = pack(table);
    EXPECT_EQ(packed.payload.size(), packed_size(table));
    return unpack(packed.metadata, packed.payload);
}

/// Recomputes both checksums, so a test can hand `unpack` data that is
/// structurally wrong yet passes them. Offsets as in docs/table_format.md.
void reseal(std::vector<std::byte>& metadata, std::vector<std::byte> const& payload) {
    auto const payload_checksum = XXH3_64bits(payload.data(), payload.size());
    std::memcpy(metadata.data() + 32, &payload_checksum, 8);
    auto const metadata_checksum = XXH3_64bits(metadata.data(), metadata.size() - 8);
    std::memcpy(metadata.data() + metadata.size() - 8, &metadata_checksum, 8);
}

}  // namespace

TEST(PackedTable, RoundTripsEveryTypeWithAndWithoutNulls) {
    for (double const nulls : {0.0, 0.3, 1.0}) {
        for (std::size_t const rows : {0, 1, 7, 8, 9, 1000}) {
            auto const table = random_table(rows, rows + 100, nulls);
            EXPECT_EQ(round_trip(table), table) << rows << " rows, null fraction " << nulls;
        }
    }
}

TEST(PackedTable, RoundTripsATableWithoutColumns) {
    EXPECT_EQ(packed_size(Table()), 0u);
    EXPECT_EQ(round_trip(Table()), Table());
}

TEST(PackedTable, RoundTripsLargeStrings) {
    TableBuilder builder(Schema({{"blob", DataType::string}}));
    std::string large(5 << 20, 'x');
    for (std::size_t index = 0; index < large.size(); index += 4093) {
        large[index] = static_cast<char>(index);
    }
    builder.column(0).append(large);
    builder.column(0).append_null();
    builder.column(0).append(std::string_view(large).substr(17, 3 << 20));
    auto const table = builder.finish();
    auto const back = round_trip(table);
    EXPECT_EQ(back, table);
    EXPECT_EQ(back.column(0).string(0), large);
}

TEST(PackedTable, PackIntoWritesExactlyPackedSizeBytes) {
    auto const table = random_table(33, 5, 0.2);
    auto const size = packed_size(table);
    EXPECT_EQ(size % 8, 0u);
    std::vector<std::byte> destination(size + 16, std::byte{0xab});
    auto const metadata = pack_into(table, destination);
    for (std::size_t index = size; index < destination.size(); ++index) {
        EXPECT_EQ(destination[index], std::byte{0xab});
    }
    EXPECT_EQ(unpack(metadata, std::span(destination).first(size)), table);
    EXPECT_THROW_WITH(static_cast<void>(unpack(metadata, destination)), CorruptData, "truncated or mismatched");
}

TEST(PackedTable, PackIntoRejectsASmallDestination) {
    auto const table = random_table(10, 6);
    std::vector<std::byte> destination(packed_size(table) - 1);
    EXPECT_THROW_WITH(static_cast<void>(pack_into(table, destination)), InvalidArgument, "into a buffer of");
}

TEST(PackedTable, UnpackRejectsEveryTruncation) {
    auto const packed = pack(random_table(20, 7, 0.2));
    for (std::size_t size = 0; size < packed.metadata.size(); ++size) {
        EXPECT_THROW(static_cast<void>(unpack(std::span(packed.metadata).first(size), packed.payload)), CorruptData)
            << size;
    }
    for (std::size_t const size : {std::size_t{0}, packed.payload.size() / 2, packed.payload.size() - 1}) {
        EXPECT_THROW_WITH(static_cast<void>(unpack(packed.metadata, std::span(packed.payload).first(size))),
                          CorruptData, "truncated");
    }
}

TEST(PackedTable, UnpackDetectsAFlippedBitAnywhere) {
    auto const packed = pack(random_table(20, 8, 0.2));
    for (std::size_t index = 0; index < packed.metadata.size(); ++index) {
        auto metadata = packed.metadata;
        metadata[index] ^= std::byte{0x10};
        EXPECT_THROW(static_cast<void>(unpack(metadata, packed.payload)), CorruptData) << index;
    }
    for (std::size_t index = 0; index < packed.payload.size(); index += 7) {
        auto payload = packed.payload;
        payload[index] ^= std::byte{0x01};
        EXPECT_THROW_WITH(static_cast<void>(unpack(packed.metadata, payload)), CorruptData, "payload fails its checksum");
    }
}

TEST(PackedTable, UnpackNamesAnotherFormatVersion) {
    auto packed = pack(random_table(3, 9));
    packed.metadata[4] = std::byte{2};
    EXPECT_THROW_WITH(static_cast<void>(unpack(packed.metadata, packed.payload)), CorruptData,
                      "packed table format version 2; this build reads version 1");
    packed.metadata[0] = std::byte{'X'};
    EXPECT_THROW_WITH(static_cast<void>(unpack(packed.metadata, packed.payload)), CorruptData, "'SPWT'");
}

TEST(PackedTable, UnpackRejectsStringOffsetsThatPassTheChecksumsButAreInvalid) {
    TableBuilder builder(Schema({{"s", DataType::string}}));
    builder.column(0).append("abc");
    builder.column(0).append("de");
    auto packed = pack(builder.finish());
    // Offsets {0, 3, 5} become {0, 9, 5}.
    std::int32_t const bad = 9;
    std::memcpy(packed.payload.data() + 4, &bad, sizeof(bad));
    reseal(packed.metadata, packed.payload);
    EXPECT_THROW_WITH(static_cast<void>(unpack(packed.metadata, packed.payload)), CorruptData,
                      "column 's': string offsets decrease at row 1");
}

TEST(PackedTable, UnpackRejectsTwoColumnsOfOneNameThatPassTheChecksums) {
    TableBuilder builder(Schema({{"a", DataType::int64}, {"b", DataType::int64}, {"c", DataType::int64}}));
    for (std::size_t column = 0; column < 3; ++column) {
        builder.column(column).append(std::int64_t{7});
    }
    auto const table = builder.finish();
    auto const good = pack(table);
    auto packed = pack(table);
    // The third column's name, after the 40-byte header and two columns of
    // 12 bytes and a one-byte name each, and its own 12 bytes.
    ASSERT_EQ(packed.metadata[40 + 2 * 13 + 12], std::byte{'c'});
    packed.metadata[40 + 2 * 13 + 12] = std::byte{'a'};
    reseal(packed.metadata, packed.payload);
    EXPECT_THROW_WITH(static_cast<void>(unpack(packed.metadata, packed.payload)), CorruptData,
                      "two columns named 'a'");
    // After a sound piece it is still corrupt, not merely of another schema.
    std::vector<PackedTableView> const pieces{{good.metadata, good.payload}, {packed.metadata, packed.payload}};
    EXPECT_THROW_WITH(static_cast<void>(unpack_concatenated(pieces)), CorruptData, "two columns named 'a'");
}

TEST(PackedTable, UnpackOfRandomlyCorruptedButResealedInputSucceedsOrThrowsCorruptData) {
    auto const table = random_table(40, 10, 0.3);
    auto const packed = pack(table);
    std::mt19937_64 random(10);
    int rejected = 0;
    for (int round = 0; round < 3000; ++round) {
        auto metadata = packed.metadata;
        auto payload = packed.payload;
        auto& target = round % 2 == 0 ? metadata : payload;
        for (int flips = 1 + static_cast<int>(random() % 3); flips > 0; --flips) {
            target[random() % target.size()] = static_cast<std::byte>(random());
        }
        reseal(metadata, payload);
        try {
            static_cast<void>(unpack(metadata, payload));
        } catch (CorruptData const&) {
            ++rejected;
        }
    }
    EXPECT_GT(rejected, 0);
}

TEST(PackedTable, UnpacksSeveralPiecesIntoTheConcatenationOfTheirTables) {
    // Pieces with and without nulls, and empty ones, in one concatenation.
    std::vector<Table> tables;
    std::vector<PackedTable> packed;
    for (std::uint64_t seed = 0; seed < 7; ++seed) {
        tables.push_back(random_table(seed * 13 % 50, seed, seed % 2 == 0 ? 0.0 : 0.25));
        packed.push_back(pack(tables.back()));
    }
    std::vector<PackedTableView> pieces;
    for (auto const& piece : packed) {
        pieces.push_back({piece.metadata, piece.payload});
    }
    EXPECT_EQ(unpack_concatenated(pieces), Table::concatenate(tables));
    EXPECT_EQ(unpack_concatenated(std::span(pieces).first(1)), tables.front());
    EXPECT_EQ(unpack_concatenated({}), Table());
}

TEST(PackedTable, UnpackingPiecesOfDifferentSchemasOrACorruptPieceFails) {
    auto const first = pack(random_table(10, 1));
    TableBuilder builder(Schema({{"other", DataType::int64}}));
    builder.column(0).append(std::int64_t{7});
    auto const other = pack(builder.finish());
    std::vector<PackedTableView> const mixed{{first.metadata, first.payload}, {other.metadata, other.payload}};
    EXPECT_THROW_WITH(static_cast<void>(unpack_concatenated(mixed)), InvalidArgument, "cannot concatenate");

    auto corrupt = pack(random_table(10, 2));
    corrupt.payload[3] ^= std::byte{1};
    std::vector<PackedTableView> const damaged{{first.metadata, first.payload}, {corrupt.metadata, corrupt.payload}};
    EXPECT_THROW_WITH(static_cast<void>(unpack_concatenated(damaged)), CorruptData, "payload fails its checksum");
}
