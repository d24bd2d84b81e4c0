#include <spillway/table/hash_partition.hpp>
#include <spillway/table/packed_gather.hpp>
#include <spillway/table/packed_table.hpp>
#include <spillway/table/table_builder.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include <common/error_matchers.hpp>

#include <gtest/gtest.h>

#include "random_table.hpp"

using namespace spillway;
using namespace spillway::table;
using spillway::table::test::random_table;
using spillway::table::test::skewed_partitions;

namespace {

/// Spans over each of `ids`.
std::vector<std::span<std::uint32_t const>> spans_of(std::vector<std::vector<std::uint32_t>> const& ids) {
    return {ids.begin(), ids.end()};
}

}  // namespace

TEST(PackedGather, EachPieceIsByteForByteThePackOfItsRowsOfEveryTableConcatenated) {
    for (std::uint64_t seed = 0; seed < 16; ++seed) {
        auto const partitions = static_cast<std::uint32_t>(1 + seed % 9);
        std::vector<Table> tables;
        std::vector<std::vector<std::uint32_t>> ids;
        for (std::uint64_t index = 0; index < 1 + seed % 4; ++index) {
            auto const rows = static_cast<std::size_t>((seed * 37 + index * 11) % 300);
            // Some tables with nulls, some without, so that a piece's nulls
            // may come from some of its tables only.
            auto const null_fraction = (seed + index) % 3 == 0 ? 0.0 : 0.15;
            tables.push_back(random_table(rows, seed * 7 + index, null_fraction));
            ids.push_back(skewed_partitions(rows, partitions, seed * 5 + index));
        }
        std::vector<std::vector<Table>> splits;
        for (std::size_t index = 0; index < tables.size(); ++index) {
            splits.push_back(split_by_partition(tables[index], ids[index], partitions));
        }

        PackedGather const gather(tables, spans_of(ids), partitions);
        ASSERT_EQ(gather.partitions(), partitions);
        for (std::uint32_t partition = 0; partition < partitions; ++partition) {
            SCOPED_TRACE(testing::Message() << "seed " << seed << ", partition " << partition);
            std::vector<Table> pieces;
            for (auto const& split : splits) {
                pieces.push_back(split[partition]);
            }
            auto const concatenation = Table::concatenate(pieces);
            auto const expected = pack(concatenation);
            EXPECT_EQ(gather.rows(partition), concatenation.num_rows());
            ASSERT_EQ(gather.packed_size(partition), expected.payload.size());
            std::vector<std::byte> payload(gather.packed_size(partition), std::byte{0xa5});  // padding must be zeroed
            auto const metadata = gather.pack_into(partition, payload);
            EXPECT_EQ(payload, expected.payload);
            EXPECT_EQ(metadata, expected.metadata);
            EXPECT_EQ(unpack(metadata, payload), concatenation);
        }
    }
}

TEST(PackedGather, PacksIntoALargerPayloadAndInAnyOrder) {
    std::vector<Table> const tables{random_table(80, 1), random_table(60, 2)};
    std::vector<std::vector<std::uint32_t>> const ids{skewed_partitions(80, 3, 1), skewed_partitions(60, 3, 2)};
    PackedGather const gather(tables, spans_of(ids), 3);
    for (std::uint32_t partition : {2U, 0U, 1U}) {
        std::vector<std::byte> payload(gather.packed_size(partition) + 100);
        auto const metadata = gather.pack_into(partition, payload);
        auto const table = unpack(metadata, std::span(payload).first(gather.packed_size(partition)));
        EXPECT_EQ(table.num_rows(), gather.rows(partition));
    }
}

TEST(PackedGather, NoTablesGiveEmptyPieces) {
    PackedGather const gather({}, {}, 4);
    ASSERT_EQ(gather.partitions(), 4U);
    std::vector<std::byte> payload;
    auto const metadata = gather.pack_into(3, payload);
    EXPECT_EQ(gather.rows(3), 0U);
    EXPECT_EQ(gather.packed_size(3), 0U);
    EXPECT_EQ(unpack(metadata, payload), Table());
}

TEST(PackedGather, RejectsTablesAndIdsThatDoNotMatch) {
    std::vector<Table> tables{random_table(10, 1), random_table(10, 2)};
    std::vector<std::vector<std::uint32_t>> ids{std::vector<std::uint32_t>(10, 0), std::vector<std::uint32_t>(10, 1)};
    EXPECT_THROW_WITH(PackedGather(tables, spans_of(ids), 0), InvalidArgument, "0 partitions");
    auto const all_ids = spans_of(ids);
    EXPECT_THROW_WITH(PackedGather(tables, std::span(all_ids).first(1), 2), InvalidArgument,
                      "1 lists of partition ids for 2 tables");
    ids[1].pop_back();
    EXPECT_THROW_WITH(PackedGather(tables, spans_of(ids), 2), InvalidArgument, "9 partition ids for a table of 10 rows");
    ids[1].push_back(2);
    EXPECT_THROW_WITH(PackedGather(tables, spans_of(ids), 2), InvalidArgument, "partition id 2 is out of range");
    ids[1].back() = 1;

    TableBuilder builder(Schema({{"other", DataType::int64}}));
    for (int row = 0; row < 10; ++row) {
        builder.column(0).append(std::int64_t{row});
    }
    tables[1] = builder.finish();
    EXPECT_THROW_WITH(PackedGather(tables, spans_of(ids), 2), InvalidArgument, "cannot gather a table of (other");
}

TEST(PackedGather, RejectsAPayloadThatDoesNotFitWithoutWritingAny) {
    std::vector<Table> const tables{random_table(40, 5)};
    std::vector<std::vector<std::uint32_t>> const ids{std::vector<std::uint32_t>(40, 1)};
    PackedGather const gather(tables, spans_of(ids), 2);
    std::vector<std::byte> payload(gather.packed_size(1) - 1, std::byte{0x11});
    EXPECT_THROW_WITH(static_cast<void>(gather.pack_into(1, payload)), InvalidArgument, "into a buffer of");
    EXPECT_EQ(payload, std::vector<std::byte>(payload.size(), std::byte{0x11}));
    EXPECT_THROW_WITH(static_cast<void>(gather.pack_into(2, payload)), InvalidArgument,
                      "partition 2 is out of range for 2 partitions");
}
