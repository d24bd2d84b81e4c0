#include <gtest/gtest.h>

#include <spillway/memory/buffer_resource.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table_shuffle/packed_partitions.hpp>
#include <spillway/table/table_checksum.hpp>
#include <spillway/table/tpch_generator.hpp>

#include <common/error_matchers.hpp>
#include <common/temporary_directory.hpp>
#include <memory/memory_test_support.hpp>

using namespace spillway;

namespace {

constexpr std::size_t keys[] = {0};

/// Moves `chunk`'s buffer to DISK, as a spill would.
void spill(shuffle::PackedData& chunk, memory::BufferResource& resource) {
    auto reservation = resource.reserve(memory::MemoryType::DISK, chunk.data.size(), memory::AllowOverbooking::no);
    chunk.data = resource.move(std::move(chunk.data), reservation);
}

/// The first generated lineitem chunk at scale 0.001, split into 8
/// partitions and packed, in partition order.
std::vector<shuffle::PackedData> packed_in_partition_order(memory::BufferResource& resource) {
    auto chunks = table_shuffle::hash_partition_and_pack(table::TpchGenerator(0.001).lineitem(0), keys, 8, resource);
    std::vector<shuffle::PackedData> in_order;
    for (shuffle::PartitionId partition = 0; partition < 8; ++partition) {
        in_order.push_back(std::move(chunks.at(partition)));
    }
    return in_order;
}

}  // namespace

TEST(HashPartitionAndPack, EachNonEmptyPartitionBecomesOneChunkThatUnpacksToItsRows) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    auto const table = table::TpchGenerator(0.001).lineitem(0).slice(0, 100);
    constexpr shuffle::PartitionId partitions = 200;  // more than the rows, so some are empty
    auto const expected = table::hash_partition(table, keys, partitions);
    std::size_t expected_chunks = 0;
    for (auto const& piece : expected) {
        expected_chunks += piece.num_rows() > 0 ? 1 : 0;
    }
    ASSERT_LT(expected_chunks, partitions) << "the test needs empty partitions";

    auto const chunks = table_shuffle::hash_partition_and_pack(table, keys, partitions, resource);
    EXPECT_EQ(chunks.size(), expected_chunks);
    std::uint64_t bytes = 0;
    table::TableChecksum unpacked;
    for (auto const& [partition, chunk] : chunks) {
        ASSERT_LT(partition, partitions);
        EXPECT_EQ(chunk.data.mem_type(), memory::MemoryType::HOST);
        bytes += chunk.data.size();
        auto const piece = table_shuffle::unpack(chunk);
        EXPECT_EQ(table::TableChecksum::of(piece), table::TableChecksum::of(expected[partition]));
        unpacked += table::TableChecksum::of(piece);
    }
    EXPECT_EQ(unpacked, table::TableChecksum::of(table));
    EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), bytes) << "every chunk is paid for by the resource";
}

TEST(HashPartitionAndPack, SpillsOtherDataToMakeRoomAndFailsWhenNothingCanBeSpilled) {
    test::TemporaryDirectory root;
    auto const table = table::TpchGenerator(0.001).lineitem(0);
    memory::BufferResource resource(test::test_config(root, 64 << 10));
    EXPECT_THROW_WITH((void)table_shuffle::hash_partition_and_pack(table, keys, 4, resource), OutOfMemory, "HOST");
    EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), 0u) << "nothing is left reserved after the failure";

    auto const overbooked = table_shuffle::hash_partition_and_pack(table, keys, 4, resource, memory::AllowOverbooking::yes);
    EXPECT_EQ(overbooked.size(), 4u);
}

TEST(HashPartitionAndPack, UnpackingASpilledChunkIsAClearError) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    auto chunks = table_shuffle::hash_partition_and_pack(table::TpchGenerator(0.001).lineitem(0), keys, 1, resource);
    auto& chunk = chunks.at(0);
    spill(chunk, resource);
    EXPECT_THROW_WITH((void)table_shuffle::unpack(chunk), InvalidArgument, "HOST");
}

TEST(HashPartitionAndPack, ChunksUnpackedTogetherAreTheirTablesConcatenated) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    auto in_order = packed_in_partition_order(resource);
    std::vector<table::Table> expected;
    for (auto const& chunk : in_order) {
        expected.push_back(table_shuffle::unpack(chunk));
    }
    EXPECT_EQ(table_shuffle::unpack(std::span<shuffle::PackedData const>(in_order)), table::Table::concatenate(expected));

    spill(in_order[5], resource);
    EXPECT_THROW_WITH((void)table_shuffle::unpack(std::span<shuffle::PackedData const>(in_order)), InvalidArgument,
                      "HOST");
}
