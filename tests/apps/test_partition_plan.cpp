#include <gtest/gtest.h>

#include <spillway/core/error.hpp>

#include <common/error_matchers.hpp>

#include "distributed_partition_job.hpp"
#include "partition_plan.hpp"

using namespace spillway;
using namespace spillway::cli;

namespace {
constexpr std::uint64_t kib = std::uint64_t{1} << 10;
constexpr std::uint64_t mib = std::uint64_t{1} << 20;
}

TEST(PartitionPlan, TakesUpToFourBlocksPerThreadWithinTheLimit) {
    auto const roomy = PartitionPlan::make(4096 * mib, 16 * mib, 2, 64, std::nullopt);
    EXPECT_EQ(roomy.window, 8u);
    EXPECT_EQ(roomy.write_buffer_bytes, PartitionPlan::largest_write_buffer);
    EXPECT_LE(roomy.bound(), roomy.limit);

    auto const tight = PartitionPlan::make(300 * mib, 16 * mib, 2, 64, std::nullopt);
    EXPECT_GE(tight.window, 2u);
    EXPECT_LT(tight.window, 8u);
    EXPECT_LE(tight.bound(), tight.limit);
    auto larger = tight;
    ++larger.window;
    EXPECT_GT(larger.bound(), tight.limit) << "the window is the largest that fits";
}

TEST(PartitionPlan, BoundCountsTheReaderTheWriterTheWindowTheThreadsAndTheWriteBuffers) {
    PartitionPlan const plan{1024 * mib, 16 * mib, 2, 10, 128 * 1024, 5};
    EXPECT_EQ(plan.bound(), PartitionPlan::fixed_bytes + 16 * mib * (2 + 5 + 2 * 2) + 10 * 128 * 1024);
}

TEST(PartitionPlan, ALimitTooSmallNamesTheLeastLimitThatWorks) {
    // The least: one block in flight (80 MiB of blocks), the program's 32
    // MiB and 64 write buffers of 64 KiB.
    EXPECT_THROW_WITH(PartitionPlan::make(100 * mib, 16 * mib, 2, 64, std::nullopt), InvalidArgument,
                      "memory limit 100.00 MiB is too small to partition into 64 files on 2 threads with blocks of "
                      "16.00 MiB: it needs at least 116.00 MiB");
    EXPECT_NO_THROW(static_cast<void>(PartitionPlan::make(116 * mib, 16 * mib, 2, 64, std::nullopt)));
    EXPECT_THROW_WITH(PartitionPlan::make(115 * mib, 16 * mib, 2, 64, std::nullopt), InvalidArgument,
                      "at least 116.00 MiB");
    // A window asked for names the least for it, and the flag that lowers it.
    EXPECT_THROW_WITH(PartitionPlan::make(150 * mib, 16 * mib, 2, 64, 2), InvalidArgument,
                      "it needs at least 164.00 MiB");
    EXPECT_THROW_WITH(PartitionPlan::make(150 * mib, 16 * mib, 2, 64, 2), InvalidArgument,
                      "or lower --window, --block-size or --partitions");
}

TEST(PartitionPlan, WithoutAWindowFewerBlocksThanThreadsRunWhereNoMoreFit) {
    // One block per thread needs 164 MiB on 2 threads; on 64 threads, 1.1 GiB.
    auto const one = PartitionPlan::make(150 * mib, 16 * mib, 2, 64, std::nullopt);
    EXPECT_EQ(one.window, 1u);
    EXPECT_LE(one.bound(), one.limit);
    EXPECT_EQ(PartitionPlan::make(164 * mib, 16 * mib, 2, 64, std::nullopt).window, 2u);
    auto const many_threads = PartitionPlan::make(1024 * mib, 16 * mib, 64, 64, std::nullopt);
    EXPECT_GE(many_threads.window, 1u);
    EXPECT_LT(many_threads.window, 64u);
    EXPECT_LE(many_threads.bound(), many_threads.limit);
    auto wider = many_threads;
    ++wider.window;
    EXPECT_GT(wider.bound(), wider.limit) << "the most blocks that fit";
}

TEST(PartitionPlan, AtATightLimitTheWriteBuffersMakeDoWithWhatTheRestLeaves) {
    // The program and two blocks in flight take 160 MiB of 200, so the 64
    // files get less than a quarter of the limit (800 KiB each), and the
    // window stays at one block per thread rather than take more from them.
    auto const plan = PartitionPlan::make(200 * mib, 16 * mib, 2, 64, std::nullopt);
    EXPECT_LT(plan.write_buffer_bytes, 200 * mib / 4 / 64);
    EXPECT_GE(plan.write_buffer_bytes, 512 * 1024u);
    EXPECT_LE(plan.bound(), plan.limit);
    EXPECT_EQ(plan.window, 2u);
}

TEST(PartitionPlan, ShrinksWriteBuffersForManyPartitionsButNotBelowTheirLeast) {
    auto const plan = PartitionPlan::make(1024 * mib, 1 * mib, 1, 4096, std::nullopt);
    EXPECT_EQ(plan.write_buffer_bytes, PartitionPlan::smallest_write_buffer);
    EXPECT_THROW_WITH(PartitionPlan::make(256 * mib, 1 * mib, 1, 4096, std::nullopt), InvalidArgument,
                      "or lower --block-size or --partitions");
    // A Parquet or Arrow file's reads are its own: --block-size would not help.
    PartitionPlan::Files files;
    files.sized_by_flag = false;
    EXPECT_THROW_WITH(PartitionPlan::make(256 * mib, 1 * mib, 1, 4096, std::nullopt, files), InvalidArgument,
                      "or lower --partitions");
}

/// Parquet files as `spillway partition` writes them: a writer encodes the
/// row group it holds when it writes it out.
PartitionPlan::Files parquet_files(std::uint64_t reader = 0) {
    return {PartitionPlan::largest_row_group, 256 * kib, [](std::uint64_t buffer) { return buffer + 3 * mib; },
            reader};
}

TEST(PartitionPlan, ParquetRowGroupsTakeAQuarterOfTheLimitUpToTheirLargest) {
    EXPECT_EQ(PartitionPlan::make(1024 * mib, 16 * mib, 2, 64, std::nullopt, parquet_files()).write_buffer_bytes,
              4 * mib);
    auto const roomy = PartitionPlan::make(64 * 1024 * mib, 16 * mib, 2, 64, std::nullopt, parquet_files());
    EXPECT_EQ(roomy.write_buffer_bytes, PartitionPlan::largest_row_group);
    EXPECT_LE(roomy.bound(), roomy.limit);
}

TEST(PartitionPlan, CountsTheReaderAndAWriterFlushingPerWorkingThreadAndOneMore) {
    auto const plan = PartitionPlan::make(1024 * mib, 16 * mib, 2, 64, 2, parquet_files(80 * mib));
    ASSERT_EQ(plan.write_buffer_bytes, 4 * mib);
    EXPECT_EQ(plan.bound(), PartitionPlan::fixed_bytes + 80 * mib + 16 * mib * (2 + 2 + 2 * 2)
                                + 64 * (4 * mib + 256 * kib) + 3 * (4 * mib + 3 * mib));
}

TEST(PartitionPlan, ShrinksParquetRowGroupsToTheMostPagesThatFitWithTheirFlushes) {
    auto const plan = PartitionPlan::make(320 * mib, 16 * mib, 2, 64, 2, parquet_files(80 * mib));
    ASSERT_LT(plan.write_buffer_bytes, 320 * mib / 4 / 64) << "less than a quarter is left";
    ASSERT_GT(plan.write_buffer_bytes, PartitionPlan::smallest_write_buffer);
    EXPECT_LE(plan.bound(), plan.limit);
    auto one_page_more = plan;
    one_page_more.write_buffer_bytes += 4096;
    one_page_more.flush_bytes += 4096;
    EXPECT_GT(one_page_more.bound(), plan.limit);
}

TEST(PartitionPlan, AGivenWindowIsKeptOrRefusedNamingTheLargestThatFits) {
    EXPECT_EQ(PartitionPlan::make(4096 * mib, 16 * mib, 2, 64, 3).window, 3u);
    EXPECT_EQ(PartitionPlan::make(4096 * mib, 16 * mib, 2, 64, 20).window, 20u);
    EXPECT_THROW_WITH(PartitionPlan::make(300 * mib, 16 * mib, 2, 64, 20), InvalidArgument,
                      "--window 20 does not fit in the memory limit 300.00 MiB");
    EXPECT_THROW_WITH(PartitionPlan::make(300 * mib, 16 * mib, 2, 64, 0), InvalidArgument, "at least 1");
    // A window of one block needs less than one block per thread.
    EXPECT_NO_THROW(static_cast<void>(PartitionPlan::make(190 * mib, 16 * mib, 2, 64, 1)));
}

TEST(PartitionMemoryConfig, KeepsAnEighthOfEachRanksShareFreeUnlessTheHeadroomIsGiven) {
    Options four_ranks;
    four_ranks.set("memory_limit_host", "1GiB").set("ranks", "4");
    EXPECT_EQ(partition_memory_config(four_ranks).spill_headroom, 32 * mib);

    Options over_mpi;
    over_mpi.set("memory_limit_host", "256MiB").set("ranks", "4").set("comm", "mpi");
    EXPECT_EQ(partition_memory_config(over_mpi).spill_headroom, 32 * mib) << "one rank a process";

    for (auto const* given : {"0", "5MiB"}) {
        Options told = four_ranks;
        told.set("spill_headroom", given);
        EXPECT_EQ(partition_memory_config(told).spill_headroom, memory::MemoryConfig::from_options(told).spill_headroom)
            << given;
    }
}
