#include <gtest/gtest.h>

#include <map>
#include <vector>

#include <spillway/memory/bookkeeping_reservation.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/host_allocator.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table/table_builder.hpp>
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

/// Consecutive slices of 1000 line items each, their storage from the
/// thread's current HOST resource.
std::vector<table::Table> tables(std::size_t count) {
    auto const lineitem = table::TpchGenerator(0.01).lineitem(0);
    std::vector<table::Table> slices;
    for (std::size_t i = 0; i < count; ++i) {
        slices.push_back(lineitem.slice(i * 1000, 1000));
    }
    return slices;
}

/// The partition of each row of `table`.
std::vector<std::uint32_t> partition_of_row(table::Table const& table) {
    return table::partition_rows(table, keys, partitions);
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

/// Adds each of `inputs` to `coalescer`, expecting it to hold them all;
/// returns their bytes.
std::size_t add_all_held(ChunkCoalescer& coalescer, std::vector<table::Table> const& inputs) {
    std::size_t added = 0;
    for (auto const& input : inputs) {
        added += input.byte_size();
        EXPECT_TRUE(coalescer.add(input, partition_of_row(input)).empty()) << "within the budget, all is held";
    }
    return added;
}

}  // namespace

TEST(ChunkCoalescer, PacksEachPartitionsRowsOfTheTablesHeldIntoOneChunkInOrder) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    auto const inputs = tables(4);
    ChunkCoalescer coalescer(resource, partitions, std::size_t{1} << 20);
    EXPECT_EQ(coalescer.held_bytes(), add_all_held(coalescer, inputs));

    auto const chunks = coalescer.flush();
    EXPECT_EQ(coalescer.held_bytes(), 0U);
    ASSERT_EQ(chunks.size(), partitions);
    for (auto const& [partition, expected] : expected_partitions(inputs)) {
        EXPECT_EQ(table_shuffle::unpack(chunks.at(partition)), expected) << "partition " << partition;
    }
    EXPECT_TRUE(coalescer.flush().empty());
}

TEST(ChunkCoalescer, PastTheBudgetEveryPartitionGoesOn) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    auto const inputs = tables(6);
    ChunkCoalescer coalescer(resource, partitions, inputs[0].byte_size() * 3 / 2);
    std::map<shuffle::PartitionId, std::vector<shuffle::PackedData>> received;
    std::size_t went_on = 0;
    for (std::size_t index = 0; index < inputs.size(); ++index) {
        auto chunks = coalescer.add(inputs[index], partition_of_row(inputs[index]));
        if (index % 2 == 0) {
            EXPECT_TRUE(chunks.empty()) << "one table is within the budget";
            EXPECT_EQ(coalescer.held_bytes(), inputs[index].byte_size());
        } else {
            EXPECT_EQ(chunks.size(), partitions) << "two tables pass it";
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

TEST(ChunkCoalescer, WithoutABudgetEachTableIsPackedAsItComes) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    ChunkCoalescer coalescer(resource, partitions, 0);
    auto const input = tables(1).front();
    auto const chunks = coalescer.add(input, partition_of_row(input));
    EXPECT_EQ(coalescer.held_bytes(), 0U);
    ASSERT_EQ(chunks.size(), partitions);
    auto const expected = table_shuffle::hash_partition_and_pack(input, keys, partitions, resource);
    for (auto const& [partition, chunk] : chunks) {
        EXPECT_EQ(chunk.metadata, expected.at(partition).metadata) << "what packing the table alone makes";
    }
    auto const no_bytes = table::TableBuilder(table::Schema({{"other", table::DataType::int64}})).finish();
    EXPECT_TRUE(coalescer.add(no_bytes, {}).empty());
    EXPECT_EQ(coalescer.add(input, partition_of_row(input)).size(), partitions)
        << "a table without bytes is not held either, so the next need not have its schema";
}

TEST(ChunkCoalescer, LeavesOutPartitionsWithoutRows) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    ChunkCoalescer coalescer(resource, partitions, 0);
    auto const input = tables(1).front();
    auto const chunks = coalescer.add(input, std::vector<std::uint32_t>(input.num_rows(), 6));
    ASSERT_EQ(chunks.size(), 1U);
    EXPECT_EQ(table_shuffle::unpack(chunks.at(6)), input);
}

TEST(ChunkCoalescer, CountsWhatItHoldsBesideTheTablesAndReturnsAllOfIt) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    {
        ChunkCoalescer coalescer(resource, partitions, std::size_t{1} << 20);
        {
            memory::ScopedHostResource const charged(&resource);
            auto inputs = tables(3);
            auto const tables_used = resource.memory_used(memory::MemoryType::HOST);
            EXPECT_GT(tables_used, 0U) << "the tables' storage counts";
            for (auto& input : inputs) {
                auto ids = partition_of_row(input);
                EXPECT_TRUE(coalescer.add(std::move(input), std::move(ids)).empty());
            }
            EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), tables_used);
        }
        EXPECT_GE(resource.memory_reserved(memory::MemoryType::HOST), memory::BookkeepingReservation::step_bytes)
            << "the partition ids and the index";
        auto const chunks = coalescer.flush();
        EXPECT_EQ(resource.memory_reserved(memory::MemoryType::HOST), 0U) << "nothing held, nothing counted";
        EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), payload_bytes(chunks)) << "only the chunks";
        memory::ScopedHostResource const charged(&resource);
        auto const input = tables(1).front();
        EXPECT_TRUE(coalescer.add(input, partition_of_row(input)).empty());
    }
    EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), 0U) << "destroying it frees what it held";
    EXPECT_EQ(resource.memory_reserved(memory::MemoryType::HOST), 0U);
}

TEST(ChunkCoalescer, RejectsWhatDoesNotFitTakingNothing) {
    test::TemporaryDirectory root;
    memory::BufferResource resource(test::test_config(root));
    EXPECT_THROW_WITH(ChunkCoalescer(resource, 0, 1), InvalidArgument, "0 partitions");
    ChunkCoalescer coalescer(resource, partitions, std::size_t{1} << 20);
    auto const input = tables(1).front();
    auto ids = partition_of_row(input);
    ids.pop_back();
    EXPECT_THROW_WITH((void)coalescer.add(input, ids), InvalidArgument, "999 partition ids for a table of 1000 rows");
    ids.push_back(partitions);
    EXPECT_THROW_WITH((void)coalescer.add(input, ids), InvalidArgument, "partition id 8 is out of range");
    EXPECT_EQ(coalescer.held_bytes(), 0U);

    EXPECT_TRUE(coalescer.add(input, partition_of_row(input)).empty());
    table::TableBuilder builder(table::Schema({{"other", table::DataType::int64}}));
    builder.column(0).append(std::int64_t{7});
    EXPECT_THROW_WITH((void)coalescer.add(builder.finish(), {0}), InvalidArgument, "a table of (other");
    EXPECT_EQ(coalescer.held_bytes(), input.byte_size());
}

TEST(ChunkCoalescer, AFailedPackLeavesEveryTableHeld) {
    test::TemporaryDirectory root;
    // Less HOST memory than the chunks need: reserving them fails at once.
    memory::BufferResource resource(test::test_config(root, 64 * 1024));
    auto const inputs = tables(2);
    ChunkCoalescer coalescer(resource, partitions, std::size_t{1} << 20);
    auto const added = add_all_held(coalescer, inputs);
    EXPECT_THROW((void)coalescer.flush(), OutOfMemory);
    EXPECT_EQ(coalescer.held_bytes(), added) << "nothing is lost";
    EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), 0U) << "no chunk is left behind";
    EXPECT_THROW((void)coalescer.flush(), OutOfMemory) << "both tables are still held";
    coalescer.discard();
    EXPECT_EQ(coalescer.held_bytes(), 0U);
    EXPECT_EQ(resource.memory_reserved(memory::MemoryType::HOST), 0U) << "nor is their bookkeeping counted";
    EXPECT_TRUE(coalescer.flush().empty());
}
