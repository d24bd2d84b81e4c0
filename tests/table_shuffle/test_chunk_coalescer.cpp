#include <gtest/gtest.h>

#include <map>
#include <vector>

#include <spillway/memory/bookkeeping_reservation.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table/tpch_generator.hpp>
#include <spillway/table_shuffle/chunk_coalescer.hpp>
#include <spillway/table_shuffle/packed_partitions.hpp>

#include <common/error_matchers.hpp>
#include <common/temporary_directory.hpp>
#include <memory/memory_test_support.hpp>

using namespace spillway;
using table_shuffle::ChunkCoalescer;

namespace {

constexpr std::size_t keys[] = {0};
constexpr shuffle::PartitionId partitions = 8;

/// Consecutive slices of 1000 line items each.
std::vector<table::Table> tables(std::size_t count) {
    auto const lineitem = table::TpchGenerator(0.01).lineitem(0);
    std::vector<table::Table> slices;
    for (std::size_t i = 0; i < count; ++i) {
        slices.push_back(lineitem.slice(i * 1000, 1000));
    }
    return slices;
}

std::size_t payload_bytes(ChunkCoalescer::Chunks const& chunks) {
    std::size_t bytes = 0;
    for (auto const& [partition, chunk] : chunks) {
        bytes += chunk.data.size();
    }
    return bytes;
}

/// Appends each chunk of `chunks` to the list of its partition.
void collect(ChunkCoalescer::Chunks chunks, std::map<shuffle::PartitionId, std::vector<shuffle::PackedData>>& into) {
    for (auto& [partition, chunk] : chunks) {
        into[partition].push_back(std::move(chunk));
    }
}

/// Each partition's rows of `inputs`, in order.
std::map<shuffle::PartitionId, table::Table> expected_partitions(std::vector<table::Table> const& inputs) {
    std::map<shuffle::PartitionId, std::vector<table::Table>> pieces;
    for (auto const& input : inputs) {
        auto split = table::hash_partition(input, keys, partitions);
        for (shuffle::PartitionId partition = 0; partition < partitions; ++partition) {
            pieces[partition].push_back(std::move(split[partition]));
        }
    }
    std::map<shuffle::PartitionId, table::Table> expected;
    for (auto const& [partition, tables] : pieces) {
        expected.emplace(partition, table::Table::concatenate(tables));
    }
    return expected;
}

/// Adds the pieces of each of `inputs` to `coalescer`, expecting it to hold
/// them all; returns their payload bytes.
std::size_t add_all_held(ChunkCoalescer& coalescer, std::vector<table::Table> const& inputs,
                         memory::BufferResource& resource) {
    std::size_t added = 0;
    for (auto const& input : inputs) {
        auto pieces = table_shuffle::hash_partition_and_pack(input, keys, partitions, resource);
        EXPECT_EQ(pieces.size(), partitions);
        added += payload_bytes(pieces);
        EXPECT_TRUE(coalescer.add(std::move(pieces)).empty()) << "under the target and the budget, all is held";
    }
    return added;
}

}  // namespace

TEST(ChunkCoalescer, MergesSmallPiecesIntoOneChunkPerPartitionWithTheRowsInOrder) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    auto const inputs = tables(4);
    ChunkCoalescer coalescer(resource, std::size_t{1} << 20, std::size_t{1} << 20);
    auto const added = add_all_held(coalescer, inputs, resource);
    EXPECT_EQ(coalescer.held_bytes(), added);

    auto const chunks = coalescer.flush();
    EXPECT_EQ(coalescer.held_bytes(), 0U);
    ASSERT_EQ(chunks.size(), partitions);
    EXPECT_LT(payload_bytes(chunks), added) << "one chunk pads its columns once, not once per piece";
    for (auto const& [partition, expected] : expected_partitions(inputs)) {
        EXPECT_EQ(table_shuffle::unpack(chunks.at(partition)), expected) << "partition " << partition;
    }
}

TEST(ChunkCoalescer, APieceAtTheTargetGoesOnAsItIs) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    auto const input = tables(1).front();
    auto pieces = table_shuffle::hash_partition_and_pack(input, keys, partitions, resource);
    std::map<shuffle::PartitionId, std::byte const*> payloads;
    for (auto const& [partition, piece] : pieces) {
        payloads[partition] = piece.data.data().data();
    }
    ChunkCoalescer coalescer(resource, std::size_t{1} << 20, 1);
    auto const chunks = coalescer.add(std::move(pieces));
    ASSERT_EQ(chunks.size(), partitions);
    for (auto const& [partition, chunk] : chunks) {
        EXPECT_EQ(chunk.data.data().data(), payloads.at(partition)) << "not copied";
    }
    EXPECT_EQ(coalescer.held_bytes(), 0U);
}

TEST(ChunkCoalescer, APartitionGoesOnOnceItsPiecesReachTheTarget) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    auto const inputs = tables(2);
    auto first = table_shuffle::hash_partition_and_pack(inputs[0], keys, partitions, resource);
    // The smallest first piece, doubled, reaches the target; no single piece does.
    std::size_t smallest = SIZE_MAX;
    std::size_t largest = 0;
    for (auto const& [partition, piece] : first) {
        smallest = std::min(smallest, piece.data.size());
        largest = std::max(largest, piece.data.size());
    }
    ASSERT_LT(largest, 2 * smallest) << "the test needs pieces of similar sizes";
    ChunkCoalescer coalescer(resource, std::size_t{1} << 20, largest + 1);
    EXPECT_TRUE(coalescer.add(std::move(first)).empty());

    auto const second = coalescer.add(table_shuffle::hash_partition_and_pack(inputs[1], keys, partitions, resource));
    ASSERT_EQ(second.size(), partitions) << "every partition's two pieces reach the target";
    EXPECT_EQ(coalescer.held_bytes(), 0U);
    auto const expected = expected_partitions({inputs[0], inputs[1]});
    for (auto const& [partition, chunk] : second) {
        EXPECT_EQ(table_shuffle::unpack(chunk), expected.at(partition)) << "partition " << partition;
    }
}

TEST(ChunkCoalescer, PastTheBudgetEveryPartitionGoesOn) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    auto const inputs = tables(6);
    auto const one_table = payload_bytes(table_shuffle::hash_partition_and_pack(inputs[0], keys, partitions, resource));
    ChunkCoalescer coalescer(resource, one_table * 3 / 2, std::size_t{1} << 20);
    std::map<shuffle::PartitionId, std::vector<shuffle::PackedData>> received;
    std::size_t went_on = 0;
    for (std::size_t index = 0; index < inputs.size(); ++index) {
        auto chunks =
            coalescer.add(table_shuffle::hash_partition_and_pack(inputs[index], keys, partitions, resource));
        if (index % 2 == 0) {
            EXPECT_TRUE(chunks.empty()) << "one table's pieces are within the budget";
            EXPECT_GT(coalescer.held_bytes(), 0U);
        } else {
            EXPECT_EQ(chunks.size(), partitions) << "two tables' pieces pass it";
            EXPECT_EQ(coalescer.held_bytes(), 0U);
            went_on += chunks.size();
        }
        collect(std::move(chunks), received);
    }
    EXPECT_EQ(went_on, 3 * partitions);
    EXPECT_TRUE(coalescer.flush().empty());
    for (auto const& [partition, expected] : expected_partitions(inputs)) {
        EXPECT_EQ(table_shuffle::unpack(std::span<shuffle::PackedData const>(received.at(partition))), expected)
            << "partition " << partition;
    }
}

TEST(ChunkCoalescer, WithoutABudgetEveryPieceGoesOnAtOnce) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    ChunkCoalescer coalescer(resource, 0);
    auto const chunks =
        coalescer.add(table_shuffle::hash_partition_and_pack(tables(1).front(), keys, partitions, resource));
    EXPECT_EQ(chunks.size(), partitions);
    EXPECT_EQ(coalescer.held_bytes(), 0U);
}

TEST(ChunkCoalescer, CountsWhatItHoldsBesideThePiecesAndReturnsAllOfIt) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    {
        ChunkCoalescer coalescer(resource, std::size_t{1} << 20, std::size_t{1} << 20);
        auto const added = add_all_held(coalescer, tables(3), resource);
        EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), added) << "the pieces' buffers";
        EXPECT_GE(resource.memory_reserved(memory::MemoryType::HOST), memory::BookkeepingReservation::step_bytes)
            << "the pieces' metadata and the index";
        auto const chunks = coalescer.flush();
        EXPECT_EQ(resource.memory_reserved(memory::MemoryType::HOST), 0U) << "nothing held, nothing counted";
        EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), payload_bytes(chunks)) << "only the merged chunks";
        auto const held =
            coalescer.add(table_shuffle::hash_partition_and_pack(tables(1).front(), keys, partitions, resource));
        EXPECT_TRUE(held.empty());
    }
    EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), 0U) << "destroying it frees what it held";
    EXPECT_EQ(resource.memory_reserved(memory::MemoryType::HOST), 0U);
}

TEST(ChunkCoalescer, RejectsAPieceOfAnotherResourceTakingNothing) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    memory::BufferResource other(test::test_config(root));
    ChunkCoalescer coalescer(resource, std::size_t{1} << 20);
    auto pieces = table_shuffle::hash_partition_and_pack(tables(1).front(), keys, partitions, resource);
    auto foreign = table_shuffle::hash_partition_and_pack(tables(1).front(), keys, 1, other);
    pieces.insert_or_assign(3, std::move(foreign.at(0)));
    EXPECT_THROW_WITH((void)coalescer.add(std::move(pieces)), InvalidArgument, "partition 3");
    EXPECT_EQ(coalescer.held_bytes(), 0U);
    EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), 0U);
}

TEST(ChunkCoalescer, AFailedMergeLeavesEveryPieceHeld) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    auto const inputs = tables(2);
    ChunkCoalescer coalescer(resource, std::size_t{1} << 20, std::size_t{1} << 20);
    std::size_t added = 0;
    for (auto const& input : inputs) {
        auto pieces = table_shuffle::hash_partition_and_pack(input, keys, partitions, resource);
        pieces.at(5).metadata.back() ^= std::byte{1};  // fails its checksum when merged
        added += payload_bytes(pieces);
        ASSERT_TRUE(coalescer.add(std::move(pieces)).empty());
    }
    EXPECT_THROW((void)coalescer.flush(), CorruptData);
    EXPECT_GE(coalescer.held_bytes(), added * 9 / 10) << "some partitions may be merged already; none is lost";
    EXPECT_GT(resource.memory_used(memory::MemoryType::HOST), 0U);
    EXPECT_THROW((void)coalescer.flush(), CorruptData) << "the corrupt piece is still held";
}
