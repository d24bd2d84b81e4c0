#include <gtest/gtest.h>

#include <spillway/core/error.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table/tpch_generator.hpp>

#include <common/error_matchers.hpp>

#include "shuffle_check.hpp"

using namespace spillway;
using namespace spillway::cli;

namespace {
constexpr std::size_t keys[] = {0};
}

TEST(ShuffleCheck, AcceptsPartitionsAsHashPartitionMadeThemAndSumsTheirChecksums) {
    auto const table = table::TpchGenerator(0.001).lineitem(0);
    auto const pieces = table::hash_partition(table, keys, 4);
    ShuffleCheck total;
    for (std::uint32_t partition = 0; partition < 4; ++partition) {
        ShuffleCheck check;
        check.add(pieces[partition], keys, partition, 4);
        total += check;
    }
    EXPECT_EQ(total.misplaced_rows, 0u);
    EXPECT_EQ(total.checksum, table::TableChecksum::of(table));
}

TEST(ShuffleCheck, CountsRowsReceivedForAnotherPartition) {
    auto const table = table::TpchGenerator(0.001).lineitem(0);
    auto const pieces = table::hash_partition(table, keys, 4);
    ShuffleCheck check;
    check.add(pieces[1], keys, 2, 4);
    EXPECT_EQ(check.misplaced_rows, pieces[1].num_rows());
    EXPECT_GT(check.misplaced_rows, 0u);
    EXPECT_THROW_WITH(check.add(pieces[0], keys, 4, 4), InvalidArgument, "not one of the 4 partitions");
}

TEST(ShuffleCheck, TheChecksumCatchesALostOrDuplicatedRow) {
    auto const table = table::TpchGenerator(0.001).lineitem(0);
    ShuffleCheck whole;
    whole.add(table, keys, 0, 1);
    ShuffleCheck short_one;
    short_one.add(table.slice(0, table.num_rows() - 1), keys, 0, 1);
    EXPECT_NE(short_one.checksum, whole.checksum);
    ShuffleCheck duplicated = whole;
    duplicated.add(table.slice(3, 1), keys, 0, 1);
    EXPECT_NE(duplicated.checksum, whole.checksum);
}
