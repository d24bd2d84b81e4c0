#include <spillway/table/hash_partition.hpp>
#include <spillway/table/packed_split.hpp>
#include <spillway/table/packed_table.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <common/error_matchers.hpp>

#include <gtest/gtest.h>

#include "random_table.hpp"

using namespace spillway;
using namespace spillway::table;
using spillway::table::test::random_table;
using spillway::table::test::skewed_partitions;

namespace {

/// Packs every piece of `split` into a buffer of its own, of exactly its size.
std::vector<std::vector<std::byte>> pack_every_piece(PackedSplit const& split,
                                                     std::vector<std::vector<std::byte>>& metadata) {
    std::vector<std::vector<std::byte>> payloads(split.partitions());
    std::vector<std::span<std::byte>> spans;
    for (std::uint32_t partition = 0; partition < split.partitions(); ++partition) {
        payloads[partition].assign(split.packed_size(partition), std::byte{0xa5});  // padding must be zeroed
        spans.emplace_back(payloads[partition]);
    }
    metadata = split.pack_into(spans);
    return payloads;
}

}  // namespace

TEST(PackedSplit, EachPieceIsByteForByteThePackOfTheSplitTable) {
    for (std::uint64_t seed = 0; seed < 12; ++seed) {
        auto const rows = static_cast<std::size_t>(seed * 37 % 400);
        auto const null_fraction = seed % 3 == 0 ? 0.0 : 0.15;
        auto const table = random_table(rows, seed, null_fraction);
        auto const partitions = static_cast<std::uint32_t>(1 + seed % 9);
        auto const ids = skewed_partitions(rows, partitions, seed);
        auto const tables = split_by_partition(table, ids, partitions);

        PackedSplit const split(table, ids, partitions);
        std::vector<std::vector<std::byte>> metadata;
        auto const payloads = pack_every_piece(split, metadata);

        ASSERT_EQ(metadata.size(), partitions);
        for (std::uint32_t partition = 0; partition < partitions; ++partition) {
            SCOPED_TRACE(testing::Message() << "seed " << seed << ", partition " << partition);
            auto const expected = pack(tables[partition]);
            EXPECT_EQ(split.rows(partition), tables[partition].num_rows());
            EXPECT_EQ(split.packed_size(partition), packed_size(tables[partition]));
            EXPECT_EQ(payloads[partition], expected.payload);
            EXPECT_EQ(metadata[partition], expected.metadata);
            EXPECT_EQ(unpack(metadata[partition], payloads[partition]), tables[partition]);
        }
    }
}

TEST(PackedSplit, APieceWithoutRowsMayBeSkippedWithAnEmptyPayload) {
    auto const table = random_table(50, 3);
    std::vector<std::uint32_t> const ids(50, 2);  // every row in partition 2 of 4
    PackedSplit const split(table, ids, 4);
    std::vector<std::byte> payload(split.packed_size(2));
    std::vector<std::span<std::byte>> const spans{{}, {}, payload, {}};
    auto const metadata = split.pack_into(spans);
    EXPECT_TRUE(metadata[0].empty());
    EXPECT_TRUE(metadata[1].empty());
    EXPECT_TRUE(metadata[3].empty());
    EXPECT_EQ(unpack(metadata[2], payload), table);
}

TEST(PackedSplit, RejectsPayloadsThatDoNotFitWithoutWritingAny) {
    auto const table = random_table(40, 5);
    std::vector<std::uint32_t> ids(40);
    for (std::size_t row = 0; row < ids.size(); ++row) {
        ids[row] = static_cast<std::uint32_t>(row % 2);
    }
    PackedSplit const split(table, ids, 2);
    std::vector<std::byte> first(split.packed_size(0), std::byte{0x11});
    std::vector<std::byte> second(split.packed_size(1) - 1, std::byte{0x11});
    std::vector<std::span<std::byte>> const short_one{first, second};
    EXPECT_THROW_WITH(static_cast<void>(split.pack_into(short_one)), InvalidArgument, "into a buffer of");
    EXPECT_EQ(first, std::vector<std::byte>(first.size(), std::byte{0x11}));

    std::vector<std::span<std::byte>> const missing_one{first};
    EXPECT_THROW_WITH(static_cast<void>(split.pack_into(missing_one)), InvalidArgument,
                              "1 payloads for a split into 2 partitions");
    std::vector<std::span<std::byte>> const empty_for_rows{first, {}};
    EXPECT_THROW_WITH(static_cast<void>(split.pack_into(empty_for_rows)), InvalidArgument,
                              "into a buffer of 0");
}

TEST(PackedSplit, RejectsPartitionIdsAsSplitByPartitionDoes) {
    auto const table = random_table(10, 1);
    std::vector<std::uint32_t> const too_few(9, 0);
    EXPECT_THROW_WITH(PackedSplit(table, too_few, 2), InvalidArgument, "9 partition ids for a table of 10 rows");
    std::vector<std::uint32_t> const out_of_range(10, 2);
    EXPECT_THROW_WITH(PackedSplit(table, out_of_range, 2), InvalidArgument, "out of range for 2 partitions");
}

TEST(PackedSplit, RejectsAColumnNameTooLongForTheFormatWithoutWritingAny) {
    TableBuilder builder(Schema({{std::string(65536, 'n'), DataType::int64}}));
    builder.column(0).append(std::int64_t{1});
    auto const table = builder.finish();
    std::vector<std::uint32_t> const ids{0};
    PackedSplit const split(table, ids, 1);
    std::vector<std::byte> payload(split.packed_size(0), std::byte{0x11});
    std::vector<std::span<std::byte>> const spans{payload};
    EXPECT_THROW_WITH(static_cast<void>(split.pack_into(spans)), InvalidArgument, "the packed format allows 65535");
    EXPECT_EQ(payload, std::vector<std::byte>(payload.size(), std::byte{0x11}));
}
