// The AllGather, run against every backend: in-process groups of 1 to 8
// ranks, and (under mpirun) the MPI job.
#include <spillway/shuffle/all_gather.hpp>

#include <common/error_matchers.hpp>

#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <spillway/comm/local_communicator.hpp>
#include <spillway/core/error.hpp>
#include <spillway/core/logging.hpp>
#include <spillway/shuffle/shuffler.hpp>

#include <gtest/gtest.h>

#include <comm/communicator_testing.hpp>

#include "shuffle_test_support.hpp"

using namespace spillway;
using namespace spillway::shuffle;
using comm::Communicator;
using comm::Rank;
using test::ChunkOrigin;

namespace {

class AllGatherContract : public test::CollectiveTest {};

/// Rank `rank`'s chunks: `count` of them, some empty, some spanning several
/// MPI parts; `index` is the sequence number.
std::vector<ChunkOrigin> chunks_of(Rank rank, std::uint64_t count) {
    std::vector<ChunkOrigin> chunks;
    for (std::uint64_t index = 0; index < count; ++index) {
        auto const size = index % 3 == 0 ? 0 : (index % 3 == 1 ? 100 + index : 2 * test::mpi_test_message_bytes + index);
        chunks.push_back({static_cast<std::uint64_t>(rank), 0, index, 0, size});
    }
    return chunks;
}

}  // namespace

TEST_P(AllGatherContract, EveryRankGetsEveryRanksChunksOrderedByRankThenSequence) {
    constexpr std::uint64_t count = 5;
    run([](Communicator& comm) {
        AllGather gather(comm, 1, comm.buffer_resource());
        auto mine = chunks_of(comm.rank(), count);
        std::ranges::reverse(mine);  // inserted out of sequence order
        for (auto const& origin : mine) {
            gather.insert(origin.index, test::make_chunk(comm.buffer_resource(), origin));
        }
        gather.insert_finished();
        std::vector<ChunkOrigin> expected;
        for (Rank rank = 0; rank < comm.nranks(); ++rank) {
            auto const chunks = chunks_of(rank, count);
            expected.insert(expected.end(), chunks.begin(), chunks.end());
        }
        std::vector<ChunkOrigin> gathered;
        for (auto const& chunk : gather.wait_and_extract()) {
            gathered.push_back(test::check_chunk(chunk));
        }
        EXPECT_EQ(gathered, expected);
        EXPECT_TRUE(gather.finished());
        EXPECT_TRUE(gather.poll()) << "every chunk arrived before wait_and_extract returned";
        EXPECT_FALSE(gather.extract_chunk().has_value());
        EXPECT_THROW_WITH(static_cast<void>(gather.wait_and_extract()), InvalidArgument, "extracted already");
    });
}

TEST_P(AllGatherContract, PollAndExtractChunkHandOutTheSameChunksOneByOne) {
    constexpr std::uint64_t count = 5;
    run([](Communicator& comm) {
        AllGather gather(comm, 1, comm.buffer_resource());
        for (auto const& origin : chunks_of(comm.rank(), count)) {
            gather.insert(origin.index, test::make_chunk(comm.buffer_resource(), origin));
        }
        EXPECT_THROW_WITH(static_cast<void>(gather.poll()), InvalidArgument, "before insert_finished");
        gather.insert_finished();
        EXPECT_THROW_WITH(static_cast<void>(gather.extract_chunk()), InvalidArgument,
                          "extract_chunk before poll() returned true");
        while (!gather.poll()) {
            std::this_thread::yield();
        }
        EXPECT_TRUE(gather.poll());
        std::vector<ChunkOrigin> expected;
        for (Rank rank = 0; rank < comm.nranks(); ++rank) {
            auto const chunks = chunks_of(rank, count);
            expected.insert(expected.end(), chunks.begin(), chunks.end());
        }
        std::vector<ChunkOrigin> gathered;
        while (auto const chunk = gather.extract_chunk()) {
            gathered.push_back(test::check_chunk(*chunk));
        }
        EXPECT_EQ(gathered, expected);
        EXPECT_TRUE(gather.finished());
        EXPECT_FALSE(gather.extract_chunk().has_value());
    });
}

TEST_P(AllGatherContract, UnorderedExtractionReturnsTheSameChunks) {
    run([](Communicator& comm) {
        AllGather gather(comm, 2, comm.buffer_resource());
        for (auto const& origin : chunks_of(comm.rank(), 4)) {
            gather.insert(origin.index, test::make_chunk(comm.buffer_resource(), origin));
        }
        gather.insert_finished();
        std::multiset<ChunkOrigin> gathered;
        for (auto const& chunk : gather.wait_and_extract(AllGather::Ordered::no)) {
            gathered.insert(test::check_chunk(chunk));
        }
        std::multiset<ChunkOrigin> expected;
        for (Rank rank = 0; rank < comm.nranks(); ++rank) {
            for (auto const& origin : chunks_of(rank, 4)) {
                expected.insert(origin);
            }
        }
        EXPECT_EQ(gathered, expected);
    });
}

TEST_P(AllGatherContract, CombinesSmallPerRankCountsLikeAReduction) {
    run([](Communicator& comm) {
        // What the CLI does with per-rank verification counts.
        std::uint64_t total = 0;
        for (OpId round = 0; round < 3; ++round) {
            AllGather gather(comm, round, comm.buffer_resource());
            std::uint64_t const count = static_cast<std::uint64_t>(comm.rank()) + round;
            auto reservation = comm.buffer_resource().reserve(memory::MemoryType::HOST, sizeof count, memory::AllowOverbooking::no);
            auto buffer = comm.buffer_resource().make_buffer(sizeof count, reservation);
            std::memcpy(buffer.data().data(), &count, sizeof count);
            gather.insert(0, PackedData{{}, std::move(buffer)});
            gather.insert_finished();
            auto const counts = gather.wait_and_extract();
            ASSERT_EQ(counts.size(), static_cast<std::size_t>(comm.nranks()));
            for (auto const& chunk : counts) {
                std::uint64_t value = 0;
                std::memcpy(&value, chunk.data.data().data(), sizeof value);
                total += value;
            }
        }
        auto const n = static_cast<std::uint64_t>(comm.nranks());
        EXPECT_EQ(total, 3 * n * (n - 1) / 2 + 3 * n);
    });
}

TEST_P(AllGatherContract, AShufflerAndAnAllGatherMayShareAnOpId) {
    run([](Communicator& comm) {
        Shuffler shuffler(comm, 7, 1, comm.buffer_resource());
        AllGather gather(comm, 7, comm.buffer_resource());
        std::unordered_map<PartitionId, PackedData> chunks;
        chunks.emplace(0, test::make_chunk(comm.buffer_resource(), {static_cast<std::uint64_t>(comm.rank()), 1, 0, 0, 64}));
        shuffler.insert(std::move(chunks));
        gather.insert(0, test::make_chunk(comm.buffer_resource(), {static_cast<std::uint64_t>(comm.rank()), 2, 0, 0, 32}));
        gather.insert_finished();
        shuffler.insert_finished();
        for (auto const& chunk : gather.wait_and_extract()) {
            EXPECT_EQ(test::check_chunk(chunk).stream, 2U);
        }
        if (comm.rank() == 0) {
            shuffler.wait(0);
            for (auto const& chunk : shuffler.extract(0)) {
                EXPECT_EQ(test::check_chunk(chunk).stream, 1U);
            }
        }
        EXPECT_TRUE(shuffler.finished());
    });
}

TEST_P(AllGatherContract, MisuseIsAClearError) {
    run([](Communicator& comm) {
        AllGather gather(comm, 3, comm.buffer_resource());
        EXPECT_THROW_WITH(static_cast<void>(gather.wait_and_extract()), InvalidArgument, "before insert_finished");
        EXPECT_THROW_WITH(AllGather(comm, 3, comm.buffer_resource()), InvalidArgument, "already running");
        memory::BufferResource other;
        EXPECT_THROW_WITH(AllGather(comm, 4, other), InvalidArgument, "communicator's");
        EXPECT_THROW_WITH(gather.insert(0, PackedData{{}, test::make_payload(other, 1, 1)}), InvalidArgument, "BufferResource");
        gather.insert_finished();
        EXPECT_THROW_WITH(gather.insert(0, test::make_chunk(comm.buffer_resource(), {})), InvalidArgument, "after insert_finished");
        EXPECT_THROW_WITH(gather.insert_finished(), InvalidArgument, "called twice");
        EXPECT_TRUE(gather.wait_and_extract().empty());
    });
}

TEST(AllGather, DestroyedUnfinishedItWarnsUnlessAnErrorIsUnwindingTheStack) {
    memory::BufferResource resource;
    memory::BufferResource* const resources[] = {&resource};
    auto const group = comm::LocalCommunicator::make_group(resources);
    std::vector<std::string> warnings;
    auto previous = set_log_sink([&](LogLevel level, std::string_view text) {
        if (level >= LogLevel::warn) {
            warnings.emplace_back(text);
        }
    });
    {
        AllGather const forgotten(*group.front(), 5, resource);
    }
    ASSERT_EQ(warnings.size(), 1U);
    EXPECT_NE(warnings.front().find("destroyed before it finished"), std::string::npos) << warnings.front();
    warnings.clear();
    try {
        AllGather const unwound(*group.front(), 6, resource);
        throw std::runtime_error("the caller's own error");
    } catch (std::runtime_error const&) {
    }
    EXPECT_TRUE(warnings.empty()) << "the error says what happened: " << warnings.front();
    set_log_sink(std::move(previous));
}

INSTANTIATE_TEST_SUITE_P(Local, AllGatherContract, ::testing::ValuesIn(test::local_backends()), test::BackendName());
INSTANTIATE_TEST_SUITE_P(Mpi, AllGatherContract, ::testing::ValuesIn(test::mpi_backends()), test::BackendName());
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AllGatherContract);
