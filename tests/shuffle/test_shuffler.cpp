// The Shuffler, run against every backend: in-process groups of 1 to 8 ranks,
// and (under mpirun) the MPI job.
#include <spillway/shuffle/shuffler.hpp>

#include <common/error_matchers.hpp>
#include <common/fault_injecting_file_operations.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <memory>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <thread>
#include <vector>

#include <spillway/comm/local_communicator.hpp>
#include <spillway/core/error.hpp>
#include <spillway/memory/memory_type.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <comm/communicator_testing.hpp>

#include "shuffle_test_support.hpp"

using namespace spillway;
using namespace spillway::shuffle;
using comm::Communicator;
using comm::Rank;
using test::ChunkOrigin;

namespace {

constexpr std::size_t kibibyte = 1024;

class ShufflerContract : public test::CollectiveTest {};
/// The cases of the contract that need a second rank: they run on 2 to 8
/// in-process ranks and on the MPI job (always 2 processes or more).
class ShufflerContractBetweenRanks : public test::CollectiveTest {};

/// What every rank inserts, the same on every rank (and process) for a seed:
/// `calls[rank][thread]` are the insert calls of one inserting thread, each
/// a set of chunks for distinct partitions.
struct Plan {
    PartitionId partitions = 1;
    PartitionOwner owner = PartitionOwner::round_robin;
    std::vector<std::vector<std::vector<std::vector<ChunkOrigin>>>> calls;

    /// Every chunk inserted for `partition`, by any rank.
    [[nodiscard]] std::set<ChunkOrigin> chunks_of(PartitionId partition) const {
        std::set<ChunkOrigin> chunks;
        for (auto const& rank : calls) {
            for (auto const& thread : rank) {
                for (auto const& call : thread) {
                    for (auto const& chunk : call) {
                        if (chunk.partition == partition) {
                            chunks.insert(chunk);
                        }
                    }
                }
            }
        }
        return chunks;
    }
};

constexpr std::size_t inserting_threads = 2;

/// A payload size for a chunk of `partition`: many small or empty chunks, a
/// few large ones, and partition 0 (the hot one) much larger than the rest.
std::size_t skewed_size(std::mt19937_64& random, PartitionId partition) {
    auto const draw = random() % 100;
    std::size_t size = 0;
    if (draw < 10) {
        size = 0;
    } else if (draw < 75) {
        size = 1 + random() % 2000;
    } else if (draw < 95) {
        size = 2000 + random() % 30000;
    } else {
        size = 100 * kibibyte + random() % (200 * kibibyte);
    }
    return partition == 0 ? size * 4 + 1 : size;
}

/// A random plan: between 1 and 3 * nranks + 2 partitions (so both fewer and
/// more than ranks), every third partition left empty when there are more
/// than three, sizes from `skewed_size`.
Plan random_plan(std::uint64_t seed, Rank nranks) {
    std::mt19937_64 random(seed);
    Plan plan;
    plan.partitions = static_cast<PartitionId>(1 + random() % (3 * static_cast<std::uint64_t>(nranks) + 2));
    plan.owner = random() % 2 == 0 ? PartitionOwner::round_robin : PartitionOwner::contiguous;
    std::vector<PartitionId> used;
    for (PartitionId partition = 0; partition < plan.partitions; ++partition) {
        if (plan.partitions <= 3 || partition % 3 != 2) {
            used.push_back(partition);
        }
    }
    plan.calls.resize(static_cast<std::size_t>(nranks));
    for (Rank rank = 0; rank < nranks; ++rank) {
        auto& threads = plan.calls[static_cast<std::size_t>(rank)];
        threads.resize(inserting_threads);
        for (std::size_t thread = 0; thread < inserting_threads; ++thread) {
            auto const call_count = 2 + random() % 5;
            for (std::uint64_t index = 0; index < call_count; ++index) {
                std::ranges::shuffle(used, random);
                auto const width = 1 + random() % std::min<std::size_t>(used.size(), 4);
                std::vector<ChunkOrigin> call;
                for (std::size_t i = 0; i < width; ++i) {
                    call.push_back({static_cast<std::uint64_t>(rank), thread, index, used[i], skewed_size(random, used[i])});
                }
                threads[thread].push_back(std::move(call));
            }
        }
    }
    return plan;
}

/// Inserts this rank's part of `plan` from `inserting_threads` threads, then
/// ends the input.
void insert_plan(Shuffler& shuffler, Communicator& comm, Plan const& plan) {
    auto const& mine = plan.calls[static_cast<std::size_t>(comm.rank())];
    std::vector<std::thread> threads;
    for (auto const& calls : mine) {
        threads.emplace_back([&] {
            for (auto const& call : calls) {
                std::unordered_map<PartitionId, PackedData> chunks;
                for (auto const& origin : call) {
                    chunks.emplace(static_cast<PartitionId>(origin.partition), test::make_chunk(comm.buffer_resource(), origin));
                }
                shuffler.insert(std::move(chunks));
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    shuffler.insert_finished();
}

/// Checks the extracted `chunks` of `partition` against `plan`: byte-exact,
/// nothing missing, nothing twice, ordered by rank and then insertion order
/// (within each inserting thread).
void check_partition(Plan const& plan, PartitionId partition, std::vector<ChunkOrigin> const& chunks) {
    std::set<ChunkOrigin> const extracted(chunks.begin(), chunks.end());
    EXPECT_EQ(extracted.size(), chunks.size()) << "a chunk of partition " << partition << " came out twice";
    EXPECT_EQ(extracted, plan.chunks_of(partition)) << "partition " << partition;
    for (std::size_t i = 1; i < chunks.size(); ++i) {
        auto const& before = chunks[i - 1];
        auto const& after = chunks[i];
        EXPECT_LE(before.source, after.source) << "partition " << partition << " is not ordered by rank";
        if (before.source == after.source && before.stream == after.stream) {
            EXPECT_LT(before.index, after.index) << "partition " << partition << " is not in insertion order";
        }
    }
}

/// The next partition as `wait_any` hands it out, or, with `poll`, as
/// `poll_any` does, polled until it has one or is done.
std::optional<PartitionId> next_partition(Shuffler& shuffler, bool poll) {
    if (!poll) {
        return shuffler.wait_any();
    }
    while (true) {
        auto const polled = shuffler.poll_any();
        if (polled.partition || polled.done) {
            EXPECT_FALSE(polled.partition && polled.done);
            return polled.partition;
        }
        std::this_thread::yield();
    }
}

/// Extracts every partition of this rank as `wait_any` (or, with `poll`,
/// `poll_any`) hands them out (odd ones chunk by chunk) and checks each
/// against `plan`.
void extract_and_check(Shuffler& shuffler, Plan const& plan, bool poll = false) {
    std::set<PartitionId> seen;
    while (auto const partition = next_partition(shuffler, poll)) {
        EXPECT_TRUE(seen.insert(*partition).second) << "wait_any returned " << *partition << " twice";
        std::vector<ChunkOrigin> origins;
        if (*partition % 2 == 0) {
            for (auto const& chunk : shuffler.extract(*partition)) {
                origins.push_back(test::check_chunk(chunk));
            }
        } else {
            while (auto const chunk = shuffler.extract_chunk(*partition)) {
                origins.push_back(test::check_chunk(*chunk));
            }
        }
        check_partition(plan, *partition, origins);
    }
    auto const& local = shuffler.local_partitions();
    EXPECT_EQ(seen, std::set<PartitionId>(local.begin(), local.end()));
    EXPECT_TRUE(shuffler.finished());
}

}  // namespace

TEST_P(ShufflerContract, EveryChunkArrivesByteExactAtItsOwnerWhateverThePartitionCountAndSizes) {
    run([](Communicator& comm) {
        // The data bytes this rank sends, keeps (its own partitions) and
        // receives, from the plans.
        double sent = 0;
        double kept = 0;
        double received = 0;
        for (std::uint64_t seed = 1; seed <= 3; ++seed) {
            auto const plan = random_plan(seed * 7919 + static_cast<std::uint64_t>(comm.nranks()), comm.nranks());
            Shuffler shuffler(comm, static_cast<OpId>(seed), plan.partitions, comm.buffer_resource(), plan.owner);
            auto const local = owned_partitions(plan.owner, plan.partitions, comm.nranks(), comm.rank());
            EXPECT_EQ(shuffler.local_partitions(), local);
            for (PartitionId partition = 0; partition < plan.partitions; ++partition) {
                bool const here = std::ranges::binary_search(local, partition);
                for (auto const& chunk : plan.chunks_of(partition)) {
                    bool const mine = chunk.source == static_cast<std::uint64_t>(comm.rank());
                    auto const bytes = static_cast<double>(chunk.size);
                    if (mine) {
                        (here ? kept : sent) += bytes;
                    } else if (here) {
                        received += bytes;
                    }
                }
            }
            insert_plan(shuffler, comm, plan);
            extract_and_check(shuffler, plan);
        }
        auto const& resource = comm.buffer_resource();
        EXPECT_EQ(test::statistic(resource, "shuffle.send.bytes"), sent);
        EXPECT_EQ(test::statistic(resource, "shuffle.local.bytes"), kept);
        EXPECT_EQ(test::statistic(resource, "shuffle.receive.bytes"), received);
        if (comm.nranks() == 1) {
            EXPECT_EQ(sent, 0.0);
        }
    });
}

TEST_P(ShufflerContract, PollAnyHandsOutEveryPartitionOnceWithoutBlocking) {
    run([](Communicator& comm) {
        auto const plan = random_plan(4242 + static_cast<std::uint64_t>(comm.nranks()), comm.nranks());
        Shuffler shuffler(comm, 1, plan.partitions, comm.buffer_resource(), plan.owner);
        EXPECT_THROW_WITH(static_cast<void>(shuffler.poll_any()), InvalidArgument, "before insert_finished");
        insert_plan(shuffler, comm, plan);
        extract_and_check(shuffler, plan, true);
        auto const after = shuffler.poll_any();
        EXPECT_FALSE(after.partition.has_value());
        EXPECT_TRUE(after.done);
    });
}

TEST_P(ShufflerContract, ASmallHostLimitSendsEveryChunkThroughTheDiskWithinOneChunkOfTheLimit) {
    // HOST holds one chunk at most: every other chunk waits on DISK, and
    // receives overbook while sends are in flight.
    constexpr std::size_t largest = 16 * kibibyte;
    constexpr std::size_t limit = largest;
    constexpr std::uint64_t chunks_per_rank = 24;
    run([](Communicator& comm) {
        auto const partitions = static_cast<PartitionId>(2 * comm.nranks() + 1);
        // Each rank's chunks, the same on every rank; the first is the largest.
        auto const chunks_of = [&](Rank rank) {
            std::mt19937_64 random(static_cast<std::uint64_t>(rank) + 17);
            std::vector<ChunkOrigin> chunks;
            for (std::uint64_t index = 0; index < chunks_per_rank; ++index) {
                auto const partition = random() % partitions;
                chunks.push_back({static_cast<std::uint64_t>(rank), 0, index, partition, index == 0 ? largest : 1 + random() % largest});
            }
            return chunks;
        };
        auto& resource = comm.buffer_resource();
        resource.set_memory_limit(memory::MemoryType::HOST, SizeSpec::bytes(limit));
        // Made one at a time within the limit and moved to DISK before the
        // shuffle starts, so that the caller holds no HOST memory while it runs.
        std::vector<std::pair<PartitionId, PackedData>> prepared;
        for (auto const& origin : chunks_of(comm.rank())) {
            auto chunk = test::make_chunk(resource, origin);
            auto reservation = resource.reserve(memory::MemoryType::DISK, origin.size, memory::AllowOverbooking::no);
            chunk.data = resource.move(std::move(chunk.data), reservation);
            prepared.emplace_back(static_cast<PartitionId>(origin.partition), std::move(chunk));
        }
        Shuffler shuffler(comm, 1, partitions, resource);
        for (auto& [partition, chunk] : prepared) {
            std::unordered_map<PartitionId, PackedData> one;
            one.emplace(partition, std::move(chunk));
            shuffler.insert(std::move(one));
        }
        shuffler.insert_finished();
        for (auto const partition : shuffler.local_partitions()) {
            shuffler.wait(partition);
        }
        // Extracted one chunk at a time: the caller holds at most one.
        std::set<ChunkOrigin> arrived;
        std::uint64_t arrived_bytes = 0;
        for (auto const partition : shuffler.local_partitions()) {
            while (auto const chunk = shuffler.extract_chunk(partition)) {
                auto const origin = test::check_chunk(*chunk);
                EXPECT_EQ(origin.partition, partition);
                EXPECT_TRUE(arrived.insert(origin).second);
                arrived_bytes += origin.size;
            }
        }
        EXPECT_TRUE(shuffler.finished());
        // Returns once this rank's own chunks are all sent, so the
        // statistics below are complete.
        EXPECT_FALSE(shuffler.wait_any().has_value());
        std::set<ChunkOrigin> expected;
        for (Rank rank = 0; rank < comm.nranks(); ++rank) {
            for (auto const& origin : chunks_of(rank)) {
                if (shuffler.owner_of(static_cast<PartitionId>(origin.partition)) == comm.rank()) {
                    expected.insert(origin);
                }
            }
        }
        EXPECT_EQ(arrived, expected);

        EXPECT_LE(resource.peak_memory_used(memory::MemoryType::HOST), limit + largest);
        if (auto const overbooked = resource.statistics().get("shuffle.overbooked.bytes")) {
            EXPECT_LE(overbooked->max, static_cast<double>(largest));
        }
        // Every chunk sent was read back from DISK, and of those that
        // arrived, all but what fits in HOST came back from DISK.
        EXPECT_EQ(
            test::statistic(resource, "shuffle.outgoing.unspill.bytes"), test::statistic(resource, "shuffle.send.bytes")
        );
        auto const from_disk = test::statistic(resource, "shuffle.received.unspill.bytes")
                               + test::statistic(resource, "shuffle.received.prefetch.bytes");
        EXPECT_GE(from_disk + static_cast<double>(limit + largest), static_cast<double>(arrived_bytes));
    });
}

TEST_P(ShufflerContract, ConcurrentShufflesWithDifferentOpIdsProgressIndependently) {
    run([](Communicator& comm) {
        auto const first_plan = random_plan(101 + static_cast<std::uint64_t>(comm.nranks()), comm.nranks());
        auto const second_plan = random_plan(202 + static_cast<std::uint64_t>(comm.nranks()), comm.nranks());
        Shuffler first(comm, 10, first_plan.partitions, comm.buffer_resource(), first_plan.owner);
        Shuffler second(comm, 11, second_plan.partitions, comm.buffer_resource(), second_plan.owner);
        // The first shuffle's input stays open until the second is fully
        // drained: one shuffle at a time per communicator would hang here.
        std::thread first_inserter([&] {
            auto const& mine = first_plan.calls[static_cast<std::size_t>(comm.rank())];
            for (auto const& calls : mine) {
                for (auto const& call : calls) {
                    std::unordered_map<PartitionId, PackedData> chunks;
                    for (auto const& origin : call) {
                        chunks.emplace(static_cast<PartitionId>(origin.partition), test::make_chunk(comm.buffer_resource(), origin));
                    }
                    first.insert(std::move(chunks));
                }
            }
        });
        insert_plan(second, comm, second_plan);
        extract_and_check(second, second_plan);
        first_inserter.join();
        first.insert_finished();
        extract_and_check(first, first_plan);
    });
}

TEST_P(ShufflerContract, AnOpIdCanBeReusedWhileAnotherRankStillRunsTheOldShuffle) {
    // Rank 0 finishes round 0, starts round 1 with the same op id and only
    // then lets rank 1 extract round 0: rank 1's old shuffler must leave
    // rank 0's new chunks alone. The rounds differ in their chunks' stream.
    constexpr comm::Tag go = comm::max_tag - 1;
    static constexpr OpId op = 5;
    run([](Communicator& comm) {
        auto const partitions = static_cast<PartitionId>(comm.nranks() + 1);
        auto const round = [&](std::uint64_t number) {
            auto shuffler = std::make_unique<Shuffler>(comm, op, partitions, comm.buffer_resource());
            for (PartitionId partition = 0; partition < partitions; ++partition) {
                std::unordered_map<PartitionId, PackedData> chunks;
                chunks.emplace(partition, test::make_chunk(comm.buffer_resource(), {static_cast<std::uint64_t>(comm.rank()), number, 0, partition, 100 + partition}));
                shuffler->insert(std::move(chunks));
            }
            shuffler->insert_finished();
            return shuffler;
        };
        auto const extract_round = [&](Shuffler& shuffler, std::uint64_t number) {
            for (auto const partition : shuffler.local_partitions()) {
                shuffler.wait(partition);
                auto const chunks = shuffler.extract(partition);
                EXPECT_EQ(chunks.size(), static_cast<std::size_t>(comm.nranks()));
                for (auto const& chunk : chunks) {
                    EXPECT_EQ(test::check_chunk(chunk).stream, number) << "a chunk of another round";
                }
            }
            EXPECT_TRUE(shuffler.finished());
        };
        auto old_round = round(0);
        if (comm.rank() == 1) {
            test::await(comm.receive(test::probe_until(comm, go, 0)));
        }
        extract_round(*old_round, 0);
        old_round.reset();
        auto new_round = round(1);
        if (comm.rank() == 0 && comm.nranks() > 1) {
            test::await(comm.send(1, go, {}));
        }
        extract_round(*new_round, 1);
    });
}

TEST_P(ShufflerContractBetweenRanks, AShufflerThatAnErrorEndsTellsTheOthersSoNotThatItWasMisused) {
    // Rank 0's shuffler goes while another error unwinds its stack (a full
    // disk elsewhere, say): the other ranks learn that an error there ended
    // it, which rank 0 reports, not that insert_finished was never called.
    run([](Communicator& comm) {
        auto const partitions = static_cast<PartitionId>(comm.nranks());
        if (comm.rank() == 0) {
            try {
                Shuffler shuffler(comm, 3, partitions, comm.buffer_resource());
                SPILLWAY_FAIL("the disk is full", IoError);
            } catch (IoError const&) {
            }
            return;
        }
        Shuffler shuffler(comm, 3, partitions, comm.buffer_resource());
        try {
            shuffler.insert_finished();
            static_cast<void>(shuffler.wait_any());
            ADD_FAILURE() << "rank 0 gave up, unnoticed";
        } catch (InvalidArgument const& error) {
            ADD_FAILURE() << "a misuse: " << error.what();
        } catch (Error const& error) {
            EXPECT_THAT(error.what(), testing::HasSubstr("rank 0 gave up: shuffle op 3 on rank 0 was ended before it "
                                                         "finished by an error there, which that rank reports"));
            EXPECT_TRUE(error.relayed_from_peer());
        }
    });
}

TEST_P(ShufflerContractBetweenRanks, DestroyingAShufflerBeforeItFinishedFailsTheOthersInsteadOfHangingThem) {
    run([](Communicator& comm) {
        auto const partitions = static_cast<PartitionId>(comm.nranks());
        Shuffler shuffler(comm, 2, partitions, comm.buffer_resource());
        auto const insert_all = [&] {
            for (PartitionId partition = 0; partition < partitions; ++partition) {
                std::unordered_map<PartitionId, PackedData> chunks;
                chunks.emplace(partition, test::make_chunk(comm.buffer_resource(), {static_cast<std::uint64_t>(comm.rank()), 0, 0, partition, 1000}));
                shuffler.insert(std::move(chunks));
            }
        };
        if (comm.rank() == 0) {
            insert_all();
            return;  // destroyed before insert_finished
        }
        // Any of these calls may be the first to learn that rank 0 gave up.
        try {
            insert_all();
            shuffler.insert_finished();
            static_cast<void>(shuffler.wait_any());
            ADD_FAILURE() << "rank 0 gave up, unnoticed";
        } catch (InvalidArgument const& error) {
            EXPECT_THAT(error.what(), testing::HasSubstr("rank 0 gave up"));
            EXPECT_TRUE(error.relayed_from_peer());
        }
        EXPECT_THROW_WITH(shuffler.insert({}), InvalidArgument, "before it finished");
        EXPECT_FALSE(shuffler.finished());
    });
}

TEST_P(ShufflerContract, MisuseIsAClearErrorAndTheShuffleStillCompletes) {
    run([](Communicator& comm) {
        auto& resource = comm.buffer_resource();
        auto const partitions = static_cast<PartitionId>(comm.nranks() + 1);
        Shuffler shuffler(comm, 3, partitions, resource);
        auto const chunk = [&](PartitionId partition) {
            std::unordered_map<PartitionId, PackedData> chunks;
            chunks.emplace(partition, test::make_chunk(resource, {static_cast<std::uint64_t>(comm.rank()), 0, 0, partition, 10}));
            return chunks;
        };
        EXPECT_THROW_WITH(shuffler.insert(chunk(partitions)), InvalidArgument, "unknown partition");
        EXPECT_THROW_WITH(static_cast<void>(shuffler.wait_any()), InvalidArgument, "before insert_finished");
        auto const mine = shuffler.local_partitions().front();
        EXPECT_THROW_WITH(shuffler.wait(mine), InvalidArgument, "before insert_finished");
        EXPECT_THROW_WITH(static_cast<void>(shuffler.extract(mine)), InvalidArgument, "before insert_finished");
        std::unordered_map<PartitionId, PackedData> oversized;
        oversized.emplace(mine, PackedData{std::vector<std::byte>(max_packed_metadata_size + 1), test::make_payload(resource, 1, 1)});
        EXPECT_THROW_WITH(shuffler.insert(std::move(oversized)), InvalidArgument, "max_packed_metadata_size");
        EXPECT_THROW_WITH(Shuffler(comm, 3, partitions, resource), InvalidArgument, "already running");
        EXPECT_THROW_WITH(Shuffler(comm, max_op_id + 1, partitions, resource), InvalidArgument, "max_op_id");
        EXPECT_THROW_WITH(Shuffler(comm, 4, 0, resource), InvalidArgument, "at least one partition");
        memory::BufferResource other;
        EXPECT_THROW_WITH(Shuffler(comm, 4, partitions, other), InvalidArgument, "communicator's");
        {
            std::unordered_map<PartitionId, PackedData> foreign;
            foreign.emplace(mine, PackedData{{}, test::make_payload(other, 1, 1)});
            EXPECT_THROW_WITH(shuffler.insert(std::move(foreign)), InvalidArgument, "BufferResource");
        }

        for (PartitionId partition = 0; partition < partitions; ++partition) {
            shuffler.insert(chunk(partition));
        }
        shuffler.insert_finished();
        EXPECT_THROW_WITH(shuffler.insert(chunk(0)), InvalidArgument, "insert after insert_finished");
        EXPECT_THROW_WITH(shuffler.insert_finished(), InvalidArgument, "called twice");
        EXPECT_THROW_WITH(shuffler.wait(partitions), InvalidArgument, "unknown partition");
        if (comm.nranks() > 1) {
            auto const foreign = shuffler.local_partitions().front() == 0 ? PartitionId{1} : PartitionId{0};
            EXPECT_THROW_WITH(shuffler.wait(foreign), InvalidArgument, "which rank");
            EXPECT_THROW_WITH(static_cast<void>(shuffler.extract(foreign)), InvalidArgument, "which rank");
        }
        for (auto const partition : shuffler.local_partitions()) {
            shuffler.wait(partition);
            EXPECT_EQ(shuffler.extract(partition).size(), static_cast<std::size_t>(comm.nranks()));
            EXPECT_THROW_WITH(static_cast<void>(shuffler.extract(partition)), InvalidArgument, "extracted already");
            EXPECT_FALSE(shuffler.extract_chunk(partition).has_value());
        }
        EXPECT_FALSE(shuffler.wait_any().has_value());
        EXPECT_TRUE(shuffler.finished());
    });
}

TEST_P(ShufflerContractBetweenRanks, RanksThatGiveDifferentPartitionCountsOrOwnersFailSayingSo) {
    // Each rank's finish message carries its layout; a receiver compares.
    run([](Communicator& comm) {
        auto const expect_refused = [](Shuffler& shuffler) {
            try {
                shuffler.insert_finished();
                while (shuffler.wait_any()) {
                }
                ADD_FAILURE() << "ranks of different layouts, unnoticed";
            } catch (InvalidArgument const& error) {
                EXPECT_THAT(error.what(),
                            testing::HasSubstr("every rank must give the same partition count and owner"));
            }
        };
        auto const ranks = static_cast<PartitionId>(comm.nranks());
        {
            Shuffler counts(comm, 7, ranks + static_cast<PartitionId>(comm.rank()), comm.buffer_resource());
            expect_refused(counts);
        }
        {
            auto const owner = comm.rank() == 0 ? PartitionOwner::contiguous : PartitionOwner::round_robin;
            Shuffler owners(comm, 8, 2 * ranks, comm.buffer_resource(), owner);
            expect_refused(owners);
        }
    });
}

TEST_P(ShufflerContractBetweenRanks, ExtractingAnIncompletePartitionIsAnError) {
    // A partition is incomplete only while another rank's input is open.
    run([](Communicator& comm) {
        constexpr comm::Tag go = comm::max_tag - 1;
        Shuffler shuffler(comm, 6, static_cast<PartitionId>(comm.nranks()), comm.buffer_resource());
        if (comm.rank() == 0) {
            shuffler.insert_finished();
            // Rank 1 has not finished: partition 0 cannot be complete.
            EXPECT_THROW_WITH(static_cast<void>(shuffler.extract(0)), InvalidArgument, "not complete");
            EXPECT_THROW_WITH(static_cast<void>(shuffler.extract_chunk(0)), InvalidArgument, "not complete");
            test::await(comm.send(1, go, {}));
        } else {
            if (comm.rank() == 1) {
                test::await(comm.receive(test::probe_until(comm, go, 0)));
            }
            shuffler.insert_finished();
        }
        for (auto const partition : shuffler.local_partitions()) {
            shuffler.wait(partition);
            EXPECT_TRUE(shuffler.extract(partition).empty());
        }
    });
}

INSTANTIATE_TEST_SUITE_P(Local, ShufflerContract, ::testing::ValuesIn(test::local_backends()), test::BackendName());
INSTANTIATE_TEST_SUITE_P(Mpi, ShufflerContract, ::testing::ValuesIn(test::mpi_backends()), test::BackendName());
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ShufflerContract);

namespace {

/// `backends` but the one of a single rank.
std::vector<test::CommunicatorBackend> with_peers(std::vector<test::CommunicatorBackend> backends) {
    std::erase_if(backends, [](test::CommunicatorBackend const& backend) { return backend.ranks == 1; });
    return backends;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Local, ShufflerContractBetweenRanks, ::testing::ValuesIn(with_peers(test::local_backends())),
                         test::BackendName());
INSTANTIATE_TEST_SUITE_P(Mpi, ShufflerContractBetweenRanks, ::testing::ValuesIn(test::mpi_backends()),
                         test::BackendName());
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ShufflerContractBetweenRanks);

TEST(Shuffler, AnIoErrorOnOneRanksProgressThreadFailsTheRankWaitingForItWithTheSameType) {
    // Two ranks: rank 0's chunk for rank 1 cannot be read back to be sent.
    constexpr Rank ranks = 2;
    test::Watchdog watchdog("a failing shuffle", std::chrono::seconds(120));
    auto const faults = std::make_shared<test::FaultInjectingFileOperations>();
    std::vector<std::unique_ptr<memory::BufferResource>> resources;
    std::vector<memory::BufferResource*> pointers;
    for (Rank rank = 0; rank < ranks; ++rank) {
        memory::MemoryConfig config;
        if (rank == 0) {
            config.file_operations = faults;
        }
        resources.push_back(std::make_unique<memory::BufferResource>(config));
        pointers.push_back(resources.back().get());
    }
    {
        auto group = comm::LocalCommunicator::make_group(pointers);
        std::vector<std::thread> threads;
        for (Rank rank = 0; rank < ranks; ++rank) {
            threads.emplace_back([&, rank] {
                auto& comm = *group[static_cast<std::size_t>(rank)];
                auto& resource = comm.buffer_resource();
                Shuffler shuffler(comm, 1, ranks, resource);
                auto chunk = test::make_chunk(resource, {static_cast<std::uint64_t>(rank), 0, 0, 1, 4096});
                if (rank == 0) {
                    // Its chunk for rank 1 waits on DISK and cannot be read back.
                    auto reservation = resource.reserve(memory::MemoryType::DISK, 4096, memory::AllowOverbooking::no);
                    chunk.data = resource.move(std::move(chunk.data), reservation);
                    faults->fail_reads(EIO, 1000);
                }
                auto const shuffle = [&] {
                    std::unordered_map<PartitionId, PackedData> chunks;
                    chunks.emplace(1, std::move(chunk));
                    shuffler.insert(std::move(chunks));
                    shuffler.insert_finished();
                    while (auto const partition = shuffler.wait_any()) {
                        static_cast<void>(shuffler.extract(*partition));
                    }
                };
                EXPECT_THROW_WITH(shuffle(), IoError, rank == 0 ? "spill file" : "rank 0 gave up");
            });
        }
        for (auto& thread : threads) {
            thread.join();
        }
    }
    for (auto const& resource : resources) {
        EXPECT_EQ(resource->memory_used(memory::MemoryType::HOST), 0U);
        EXPECT_EQ(resource->memory_used(memory::MemoryType::DISK), 0U);
    }
}

TEST(Shuffler, TheMetadataOfSmallChunksIsCountedSentAndSpilledWithTheirData) {
    // Rank 0 sends ten chunks of 1000 bytes to rank 1, which spills them all:
    // their metadata goes to disk with them, and comes back intact.
    constexpr Rank ranks = 2;
    constexpr std::size_t chunks = 10;
    constexpr std::size_t chunk_size = 1000;
    test::Watchdog watchdog("a shuffle of small chunks", std::chrono::seconds(120));
    auto const resources = test::rank_resources(ranks);
    auto const metadata_size = test::make_chunk(*resources.pointers[0], {0, 0, 0, 1, chunk_size}).metadata.size();
    ASSERT_GT(metadata_size, 0U);
    auto group = comm::LocalCommunicator::make_group(resources.pointers);
    // No prefetch: the progress thread would read the spilled chunks back
    // between the spill and the check of DISK use.
    ShuffleConfig config;
    config.prefetch = SizeSpec::bytes(0);
    std::vector<std::thread> threads;
    for (Rank rank = 0; rank < ranks; ++rank) {
        threads.emplace_back([&, rank] {
            auto& comm = *group[static_cast<std::size_t>(rank)];
            auto& resource = comm.buffer_resource();
            Shuffler shuffler(comm, 1, ranks, resource, PartitionOwner::round_robin, config);
            if (rank == 0) {
                for (std::uint64_t index = 0; index < chunks; ++index) {
                    std::unordered_map<PartitionId, PackedData> one;
                    one.emplace(1, test::make_chunk(resource, {0, 0, index, 1, chunk_size}));
                    shuffler.insert(std::move(one));
                }
            }
            shuffler.insert_finished();
            if (rank == 0) {  // owns partition 0, which is empty
                ASSERT_EQ(shuffler.wait_any(), PartitionId{0});
                EXPECT_TRUE(shuffler.extract(0).empty());
                EXPECT_EQ(shuffler.wait_any(), std::nullopt);
                return;
            }
            shuffler.wait(1);
            EXPECT_EQ(resource.spill_manager().spill(chunks * (chunk_size + metadata_size)),
                      chunks * (chunk_size + metadata_size));
            EXPECT_EQ(resource.memory_used(memory::MemoryType::DISK), chunks * (chunk_size + metadata_size));
            std::uint64_t index = 0;
            for (auto const& chunk : shuffler.extract(1)) {
                EXPECT_EQ(chunk.data.size(), chunk_size);
                auto const origin = test::check_chunk(chunk);
                EXPECT_EQ(origin.index, index++);
                EXPECT_EQ(origin.partition, 1U);
            }
            EXPECT_EQ(index, chunks);
            EXPECT_EQ(test::statistic(resource, "shuffle.receive.bytes"), static_cast<double>(chunks * chunk_size));
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
}

namespace {

/// Inserts `count` chunks of `size` bytes into partition 0, one call each,
/// numbered from 0.
void insert_numbered(Shuffler& shuffler, memory::BufferResource& resource, std::uint64_t count, std::size_t size) {
    for (std::uint64_t index = 0; index < count; ++index) {
        std::unordered_map<PartitionId, PackedData> one;
        one.emplace(0, test::make_chunk(resource, {0, 0, index, 0, size}));
        shuffler.insert(std::move(one));
    }
}

/// Checks that `chunks` are the `count` chunks `insert_numbered` made, intact
/// and in order.
void expect_numbered(std::vector<PackedData> const& chunks, std::uint64_t count, std::size_t size) {
    std::uint64_t index = 0;
    for (auto const& chunk : chunks) {
        EXPECT_EQ(chunk.data.size(), size);
        EXPECT_EQ(test::check_chunk(chunk).index, index++);
    }
    EXPECT_EQ(index, count);
}

}  // namespace

TEST(Shuffler, TakingInlineMetadataBackOutOfSmallChunksNeedsNoMoreMemory) {
    // One rank, HOST full and every spill write failing: the chunks'
    // metadata comes back out of their buffers by shortening them in place,
    // so the extraction neither needs room nor spills.
    constexpr std::size_t chunk_size = 1000;
    test::Watchdog watchdog("an extraction with HOST full", std::chrono::seconds(120));
    auto const faults = std::make_shared<test::FaultInjectingFileOperations>();
    memory::MemoryConfig memory_config;
    memory_config.host_limit = SizeSpec::bytes(64 * kibibyte);
    memory_config.file_operations = faults;
    memory::BufferResource resource(memory_config);
    std::array<memory::BufferResource*, 1> const resources{&resource};
    auto group = comm::LocalCommunicator::make_group(resources);
    Shuffler shuffler(*group[0], 1, 1, resource);
    insert_numbered(shuffler, resource, 4, chunk_size);
    shuffler.insert_finished();
    shuffler.wait(0);
    {
        auto const hog = resource.reserve(
            memory::MemoryType::HOST, static_cast<std::size_t>(resource.memory_available(memory::MemoryType::HOST)),
            memory::AllowOverbooking::no
        );
        faults->fail_writes(ENOSPC);
        expect_numbered(shuffler.extract(0), 4, chunk_size);
    }
    EXPECT_EQ(test::statistic(resource, "shuffle.received.spill.bytes"), 0.0);
    EXPECT_TRUE(shuffler.finished());
}

TEST(Shuffler, AChunkCorruptedInTransitFailsTheShuffleSayingFromWhichRank) {
    // The network flips one byte of the first chunk rank 0 sends to rank 1.
    // Rank 1 finds it by the message's checksum, says where it came from, and
    // rank 0 learns it from rank 1's abandon message.
    test::Watchdog watchdog("a shuffle with a corrupting network", std::chrono::seconds(120));
    std::array<memory::BufferResource, 2> resources;
    std::array<memory::BufferResource*, 2> const pointers{&resources[0], &resources[1]};
    std::atomic<int> corrupted{0};
    auto group = comm::LocalCommunicator::make_group(pointers, [&](Rank source, Rank destination,
                                                                   std::span<std::byte> payload) {
        if (source == 0 && destination == 1 && corrupted++ == 0) {
            payload[payload.size() / 2] ^= std::byte{0x20};
        }
    });
    std::vector<std::thread> threads;
    for (Rank rank = 0; rank < 2; ++rank) {
        threads.emplace_back([&, rank] {
            auto& resource = resources[static_cast<std::size_t>(rank)];
            Shuffler shuffler(*group[static_cast<std::size_t>(rank)], 1, 2, resource);
            if (rank == 1) {
                // insert_finished too throws once the exchange has failed.
                auto const finish_and_wait = [&] {
                    shuffler.insert_finished();
                    shuffler.wait(1);
                };
                EXPECT_THROW_WITH(finish_and_wait(), CorruptData,
                                  "shuffle op 1 on rank 1: a chunk of partition 1 (100000 bytes) is corrupt in "
                                  "transit from rank 0");
                return;
            }
            // Rank 0 learns of it from rank 1's abandon message, whenever that
            // arrives: at an insert, or not before its own partition completed.
            try {
                for (std::uint64_t index = 0; index < 3; ++index) {
                    std::unordered_map<PartitionId, PackedData> one;
                    one.emplace(1, test::make_chunk(resource, {0, 0, index, 1, 100'000}));
                    shuffler.insert(std::move(one));
                }
                shuffler.insert_finished();
                shuffler.wait(0);
                EXPECT_TRUE(shuffler.extract(0).empty());
            } catch (CorruptData const& error) {
                EXPECT_THAT(error.what(), testing::HasSubstr("rank 1 gave up"));
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    EXPECT_GT(corrupted.load(), 0);
}

TEST(Shuffler, APeerThatSendsNothingForTheCollectiveTimeoutFailsTheOthersNamingIt) {
    // Rank 1 creates its shuffler only once rank 0's has given up on it:
    // rank 0 hears nothing from it, fails with PeerTimeout naming it, and its
    // destructor returns although rank 1 never sent a finish. Rank 0 had
    // sent all it owed (its finish), so rank 1, late, still completes.
    test::Watchdog watchdog("a shuffle with a silent peer", std::chrono::seconds(120));
    std::array<memory::BufferResource, 2> resources;
    std::array<memory::BufferResource*, 2> const pointers{&resources[0], &resources[1]};
    auto group = comm::LocalCommunicator::make_group(pointers);
    ShuffleConfig config;
    config.collective_timeout = std::chrono::milliseconds(300);
    ShuffleConfig never;
    never.collective_timeout = std::chrono::nanoseconds::zero();
    EXPECT_THROW_WITH((Shuffler(*group[0], 1, 2, resources[0], PartitionOwner::round_robin, never)),
                      InvalidArgument, "collective_timeout must be positive");
    auto const started = std::chrono::steady_clock::now();
    {
        Shuffler shuffler(*group[0], 1, 2, resources[0], PartitionOwner::round_robin, config);
        shuffler.insert_finished();
        EXPECT_THROW_WITH(shuffler.wait(0), PeerTimeout,
                          "shuffle op 1 on rank 0: rank 1 sent nothing for");
        EXPECT_THROW_WITH(shuffler.wait(0), PeerTimeout, "collective_timeout is 300 ms");
    }
    EXPECT_GE(std::chrono::steady_clock::now() - started, config.collective_timeout);
    Shuffler late(*group[1], 1, 2, resources[1], PartitionOwner::round_robin, config);
    late.insert_finished();
    late.wait(1);
    EXPECT_TRUE(late.extract(1).empty());
}

TEST(Shuffler, AProcessThatWasStoppedDoesNotBlameItsPeersForItsOwnSilenceWhenItResumes) {
    // A child process with two ranks stops itself (SIGSTOP) for three
    // timeouts once both shufflers run. Resumed, neither rank has heard from
    // the other for that long, but neither was silent: the process was.
    constexpr auto timeout = std::chrono::milliseconds(1500);  // far above scheduling delays, under TSan too
    pid_t const child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        int code = 0;
        try {
            std::array<memory::BufferResource, 2> resources;
            std::array<memory::BufferResource*, 2> const pointers{&resources[0], &resources[1]};
            auto group = comm::LocalCommunicator::make_group(pointers);
            ShuffleConfig config;
            config.collective_timeout = timeout;
            std::atomic<int> made{0};
            std::atomic<bool> resumed{false};
            std::atomic<bool> failed{false};
            std::vector<std::thread> threads;
            for (Rank rank = 0; rank < 2; ++rank) {
                threads.emplace_back([&, rank] {
                    try {
                        Shuffler shuffler(*group[static_cast<std::size_t>(rank)], 1, 2,
                                          resources[static_cast<std::size_t>(rank)], PartitionOwner::round_robin,
                                          config);
                        made.fetch_add(1);
                        while (!resumed.load()) {
                            std::this_thread::sleep_for(std::chrono::milliseconds(1));
                        }
                        shuffler.insert_finished();
                        shuffler.wait(static_cast<PartitionId>(rank));
                        static_cast<void>(shuffler.extract(static_cast<PartitionId>(rank)));
                    } catch (std::exception const& error) {
                        std::fprintf(stderr, "rank %d: %s\n", rank, error.what());
                        failed.store(true);
                    }
                });
            }
            while (made.load() < 2) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            std::this_thread::sleep_for(timeout / 2);  // the progress threads have looked
            std::raise(SIGSTOP);
            resumed.store(true);
            for (auto& thread : threads) {
                thread.join();
            }
            code = failed.load() ? 1 : 0;
        } catch (...) {
            code = 2;
        }
        ::_exit(code);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
    ASSERT_TRUE(WIFSTOPPED(status));
    std::this_thread::sleep_for(3 * timeout);
    ASSERT_EQ(::kill(child, SIGCONT), 0);
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a rank blamed the other for the time its process was stopped (its "
                                         "message is on stderr)";
}

TEST(Shuffler, ABusyPeerThatInsertsNothingForLongerThanTheCollectiveTimeoutIsNotSilent) {
    // Heartbeats from its progress thread keep a peer whose caller is busy
    // from timing out: rank 1 inserts only after three timeouts.
    test::Watchdog watchdog("a shuffle with a slow peer", std::chrono::seconds(120));
    std::array<memory::BufferResource, 2> resources;
    std::array<memory::BufferResource*, 2> const pointers{&resources[0], &resources[1]};
    auto group = comm::LocalCommunicator::make_group(pointers);
    // Long enough that the two ranks' start-up skew and a loaded machine's
    // scheduling delays (under TSan too) never come near it.
    ShuffleConfig config;
    config.collective_timeout = std::chrono::milliseconds(1500);
    std::vector<std::thread> threads;
    for (Rank rank = 0; rank < 2; ++rank) {
        threads.emplace_back([&, rank] {
            auto& resource = resources[static_cast<std::size_t>(rank)];
            Shuffler shuffler(*group[static_cast<std::size_t>(rank)], 1, 2, resource, PartitionOwner::round_robin,
                              config);
            if (rank == 1) {
                std::this_thread::sleep_for(3 * config.collective_timeout);
                std::unordered_map<PartitionId, PackedData> one;
                one.emplace(0, test::make_chunk(resource, {1, 0, 0, 0, 1000}));
                shuffler.insert(std::move(one));
            }
            shuffler.insert_finished();
            auto const partition = static_cast<PartitionId>(rank);
            EXPECT_NO_THROW(shuffler.wait(partition));
            EXPECT_EQ(shuffler.extract(partition).size(), rank == 0 ? 1U : 0U);
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
}

TEST(Shuffler, UnderForceDiskAFailedExtractionPutsItsChunksBackAsTheyAreAndKeepsItsError) {
    // One rank, every chunk on DISK. The third read-back fails; the two
    // chunks read before it go back into the store in HOST, although the
    // disk is full: moving them to DISK again would fail, replace the error
    // and lose them.
    constexpr std::size_t chunk_size = 1000;
    test::Watchdog watchdog("a failing extraction under force_disk", std::chrono::seconds(120));
    auto const faults = std::make_shared<test::FaultInjectingFileOperations>();
    memory::MemoryConfig memory_config;
    memory_config.force_disk = true;
    memory_config.file_operations = faults;
    memory::BufferResource resource(memory_config);
    std::array<memory::BufferResource*, 1> const resources{&resource};
    auto group = comm::LocalCommunicator::make_group(resources);
    ShuffleConfig config;
    config.prefetch = SizeSpec::bytes(0);
    Shuffler shuffler(*group[0], 1, 1, resource, PartitionOwner::round_robin, config);
    insert_numbered(shuffler, resource, 4, chunk_size);
    shuffler.insert_finished();
    shuffler.wait(0);
    ASSERT_EQ(resource.memory_used(memory::MemoryType::HOST), 0U);
    std::atomic<int> reads{0};
    faults->before_read([&] {
        if (++reads == 3) {
            faults->fail_reads(EIO);
        }
    });
    faults->fail_writes(ENOSPC, 1000);
    EXPECT_THROW_WITH(static_cast<void>(shuffler.extract(0)), IoError, "Input/output error");
    faults->fail_writes(ENOSPC, 0);
    expect_numbered(shuffler.extract(0), 4, chunk_size);
    EXPECT_TRUE(shuffler.finished());
}

TEST(Shuffler, PartitionsWhoseStateDoesNotFitTheLimitAreRefusedAtOnceNamingThem) {
    // Each partition's state is counted: a million of them under 1 MiB
    // would otherwise hold some hundred bytes apiece outside any limit.
    memory::MemoryConfig memory_config;
    memory_config.host_limit = SizeSpec::bytes(1024 * kibibyte);
    memory::BufferResource resource(memory_config);
    std::array<memory::BufferResource*, 1> const resources{&resource};
    auto group = comm::LocalCommunicator::make_group(resources);
    EXPECT_THROW_WITH(Shuffler(*group[0], 1, PartitionId{1} << 20, resource), OutOfMemory,
                      "shuffle op 1 on rank 0 cannot keep the state of its 1048576 partitions, 96.00 MiB of HOST "
                      "memory, within the limit of 1.00 MiB");
    // With one partition, fewer is no way out.
    memory_config.host_limit = SizeSpec::bytes(0);
    memory::BufferResource empty(memory_config);
    std::array<memory::BufferResource*, 1> const empty_resources{&empty};
    auto empty_group = comm::LocalCommunicator::make_group(empty_resources);
    try {
        Shuffler const none(*empty_group[0], 1, 1, empty);
        ADD_FAILURE() << "a shuffler was made with no memory for its partition";
    } catch (OutOfMemory const& error) {
        EXPECT_THAT(error.what(), testing::HasSubstr("cannot keep the state of its 1 partition, "));
        EXPECT_THAT(error.what(), testing::Not(testing::HasSubstr("fewer partitions")));
    }
    EXPECT_EQ(resource.memory_reserved(memory::MemoryType::HOST), 0U);
    {
        Shuffler fits(*group[0], 2, 1000, resource);
        EXPECT_EQ(resource.memory_reserved(memory::MemoryType::HOST), 1000 * Shuffler::bytes_per_partition());
        fits.end_early_quietly();
    }
    // Over the limit already (what is held may yet spill), a shuffler is still made: it overbooks.
    auto const held = resource.reserve(memory::MemoryType::HOST, 2048 * kibibyte, memory::AllowOverbooking::yes);
    Shuffler overbooked(*group[0], 3, 1000, resource);
    EXPECT_EQ(resource.memory_reserved(memory::MemoryType::HOST), held.size() + 1000 * Shuffler::bytes_per_partition());
    overbooked.end_early_quietly();
}

TEST(Shuffler, ExtractionPrefetchesTheNextSpilledChunksWhileHostHoldsMoreOfLaterPartitions) {
    // One rank, HOST for six chunks. Partition 0's four chunks go in, and
    // making room for five spills the last three of them; then partition 1's
    // four go in. So partition 0, extracted first, has three chunks on DISK,
    // while HOST holds all of partition 1's, one of partition 0's, and room
    // for one more: more than the prefetch window of chunks of another
    // partition, which must not keep partition 0's from coming back.
    constexpr std::size_t chunk_size = 64 * kibibyte;
    test::Watchdog watchdog("a prefetching shuffle", std::chrono::seconds(120));
    memory::MemoryConfig memory_config;
    // And 4 KiB for the chunks' bookkeeping, which the stores count, and
    // 1 KiB for the two partitions' state.
    memory_config.host_limit = SizeSpec::bytes(6 * chunk_size + 5 * kibibyte);
    memory::BufferResource resource(memory_config);
    std::array<memory::BufferResource*, 1> const resources{&resource};
    auto group = comm::LocalCommunicator::make_group(resources);
    ShuffleConfig config;
    config.prefetch = SizeSpec::bytes(2 * chunk_size);
    Shuffler shuffler(*group[0], 1, 2, resource, PartitionOwner::round_robin, config);
    for (std::uint64_t partition : {0, 1}) {
        for (std::uint64_t index = 0; index < 4; ++index) {
            std::unordered_map<PartitionId, PackedData> one;
            one.emplace(partition, test::make_chunk(resource, {0, 0, index, partition, chunk_size}));
            shuffler.insert(std::move(one));
        }
        if (partition == 0) {
            ASSERT_TRUE(resource.spill_manager().spill_to_make_headroom(5 * chunk_size).reached);
        }
    }
    ASSERT_EQ(test::statistic(resource, "shuffle.received.spill.bytes"), 3.0 * chunk_size);
    shuffler.insert_finished();
    ASSERT_EQ(shuffler.wait_any(), PartitionId{0});

    // The progress thread reads partition 0's first chunk back into the room.
    auto const give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (test::statistic(resource, "shuffle.received.prefetch.bytes") == 0.0
           && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(test::statistic(resource, "shuffle.received.prefetch.bytes"), static_cast<double>(chunk_size));

    for (std::uint64_t partition : {0, 1}) {
        std::uint64_t index = 0;
        while (auto const chunk = shuffler.extract_chunk(static_cast<PartitionId>(partition))) {
            auto const origin = test::check_chunk(*chunk);
            EXPECT_EQ(origin.partition, partition);
            EXPECT_EQ(origin.index, index++);
        }
        EXPECT_EQ(index, 4U);
        if (partition == 0) {
            ASSERT_EQ(shuffler.wait_any(), PartitionId{1});
        }
    }
    EXPECT_EQ(shuffler.wait_any(), std::nullopt);
    EXPECT_LE(resource.peak_memory_used(memory::MemoryType::HOST), 6 * chunk_size);
}

TEST(Shuffler, AtMost64ChunksAreInFlightToOneDestination) {
    // Rank 1 makes its shuffler late, so nothing sent to it is received
    // meanwhile. Rank 0 inserts 200 small chunks for rank 1, then 200 for
    // rank 2, which receives them. Sends go to the destinations in turn, so
    // by the time rank 2 has all of its chunks, rank 0 had a turn for each of
    // rank 1's, well within its byte window; only 64 of them went.
    constexpr std::uint64_t chunks = 200;
    constexpr std::size_t chunk_size = kibibyte;
    test::Watchdog watchdog("chunks in flight to a late rank", std::chrono::seconds(120));
    memory::MemoryConfig memory_config;
    memory_config.host_limit = SizeSpec::bytes(std::size_t{64} << 20);
    auto const owned = test::rank_resources(3, memory_config);
    auto const& resources = owned.pointers;
    std::atomic<std::uint64_t> sent_to_late{0};
    auto group = comm::LocalCommunicator::make_group(resources, [&](Rank, Rank destination, std::span<std::byte>) {
        if (destination == 1) {
            sent_to_late.fetch_add(1);
        }
    });
    auto sender = std::make_unique<Shuffler>(*group[0], 1, 3, *resources[0]);
    auto receiver = std::make_unique<Shuffler>(*group[2], 1, 3, *resources[2]);
    for (std::uint64_t partition : {1, 2}) {
        for (std::uint64_t index = 0; index < chunks; ++index) {
            std::unordered_map<PartitionId, PackedData> one;
            one.emplace(partition, test::make_chunk(*resources[0], {0, 0, index, partition, chunk_size}));
            sender->insert(std::move(one));
        }
    }
    sender->insert_finished();
    while (test::statistic(*resources[2], "shuffle.receive.bytes") < static_cast<double>(chunks * chunk_size)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(sent_to_late.load(), 64U);

    auto late = std::make_unique<Shuffler>(*group[1], 1, 3, *resources[1]);
    late->insert_finished();
    receiver->insert_finished();
    sender->wait(0);
    EXPECT_TRUE(sender->extract(0).empty());
    for (auto const& [shuffler, partition] :
         std::vector<std::pair<Shuffler*, PartitionId>>{{late.get(), 1}, {receiver.get(), 2}}) {
        shuffler->wait(partition);
        auto const received = shuffler->extract(partition);
        ASSERT_EQ(received.size(), chunks);
        for (std::uint64_t index = 0; index < chunks; ++index) {
            EXPECT_EQ(test::check_chunk(received[index]), (ChunkOrigin{0, 0, index, partition, chunk_size}));
        }
    }
    EXPECT_EQ(sent_to_late.load(), chunks);
}

TEST(Shuffler, TakingTheFirstSmallChunkOfASpilledPartitionStartsItsPrefetch) {
    // One rank, one partition of 64 chunks of 1 KiB, all spilled once the
    // exchange has nothing left to do. Taking the first chunk wakes the
    // progress thread, which reads the rest back ahead of the caller: it is
    // not left waiting until a part of the window has been taken chunk by
    // chunk on the caller's thread.
    constexpr std::size_t chunk_size = kibibyte;
    constexpr std::uint64_t chunks = 64;
    test::Watchdog watchdog("a prefetch of small chunks", std::chrono::seconds(120));
    memory::MemoryConfig memory_config;
    memory_config.host_limit = SizeSpec::bytes(1024 * kibibyte);
    memory::BufferResource resource(memory_config);
    std::array<memory::BufferResource*, 1> const resources{&resource};
    auto group = comm::LocalCommunicator::make_group(resources);
    Shuffler shuffler(*group[0], 1, 1, resource);
    insert_numbered(shuffler, resource, chunks, chunk_size);
    shuffler.insert_finished();
    shuffler.wait(0);
    static_cast<void>(resource.spill_manager().spill(1024 * kibibyte));
    ASSERT_GE(test::statistic(resource, "shuffle.received.spill.bytes"), static_cast<double>(chunks * chunk_size));

    auto const first = shuffler.extract_chunk(0);
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(test::check_chunk(*first).index, 0U);
    while (test::statistic(resource, "shuffle.received.prefetch.bytes") == 0.0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the watchdog bounds it
    }
    std::uint64_t index = 1;
    while (auto const chunk = shuffler.extract_chunk(0)) {
        EXPECT_EQ(test::check_chunk(*chunk).index, index++);
    }
    EXPECT_EQ(index, chunks);
}
