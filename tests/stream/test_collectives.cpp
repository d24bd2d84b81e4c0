// shuffle_tables: one hash shuffle of streamed tables, each rank a pipeline
// on a shared thread pool, with ranks as threads of one process.
#include <spillway/stream/collectives.hpp>

#include <common/error_matchers.hpp>
#include <common/watchdog.hpp>

#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <string>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include <spillway/comm/local_communicator.hpp>
#include <spillway/shuffle/all_gather.hpp>
#include <spillway/core/error.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/memory/host_allocator.hpp>
#include <spillway/stream/table_message.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table/table_checksum.hpp>
#include <spillway/table/tpch_generator.hpp>

#include <gtest/gtest.h>

#include "stream_test_support.hpp"

using namespace spillway;
using namespace spillway::stream;
using namespace spillway::test;

namespace {

constexpr shuffle::PartitionId partitions = 7;

/// What one rank received: the checksum of each partition, and the rows in
/// a partition their key does not hash to.
struct Received {
    std::map<std::uint64_t, table::TableChecksum> partitions;
    std::size_t misplaced = 0;
    std::size_t messages = 0;
};

Actor collect(Context& context, Channel& input, Received& received) {
    CloseAtExit closer{&input};
    std::size_t const key[] = {0};
    while (std::optional<Message> message = co_await input.receive()) {
        memory::ScopedHostResource const scope(&context.resource());
        auto const table = unpack_table(*message);
        ++received.messages;
        received.partitions[message->sequence] += table::TableChecksum::of(table);
        if (table.num_rows() > 0) {
            for (auto const partition : table::partition_rows(table, key, partitions)) {
                received.misplaced += partition != message->sequence ? 1 : 0;
            }
        }
    }
}

/// What a streaming shuffle over several ranks did: what each rank
/// received, the error each rank's pipeline failed with, if any, and the
/// bytes all ranks spilled.
struct ShuffleRun {
    std::vector<Received> received;
    std::vector<std::optional<std::string>> errors;
    double spilled = 0;
};

/// Runs a streaming shuffle of `generator`'s lineitem chunks by l_orderkey
/// over `ranks` ranks as threads, each under `host_limit`.
/// With `by_name`, the key is named (`shuffle_tables_by_name`).
ShuffleRun shuffle_over_ranks(
    table::TpchGenerator const& generator, comm::Rank ranks, std::size_t host_limit,
    std::chrono::milliseconds reserve_timeout = std::chrono::seconds(30), bool by_name = false,
    std::size_t min_split_bytes = 0
) {
    std::vector<std::unique_ptr<TemporaryDirectory>> roots;
    std::vector<std::unique_ptr<memory::BufferResource>> owned;
    std::vector<memory::BufferResource*> resources;
    for (comm::Rank rank = 0; rank < ranks; ++rank) {
        roots.push_back(std::make_unique<TemporaryDirectory>());
        auto config = test_config(*roots.back(), host_limit);
        config.reserve_timeout = reserve_timeout;
        owned.push_back(std::make_unique<memory::BufferResource>(config));
        resources.push_back(owned.back().get());
    }
    auto group = comm::LocalCommunicator::make_group(resources);
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    ShuffleRun run{.received = std::vector<Received>(static_cast<std::size_t>(ranks)),
                   .errors = std::vector<std::optional<std::string>>(static_cast<std::size_t>(ranks))};
    std::vector<std::thread> threads;
    for (comm::Rank rank = 0; rank < ranks; ++rank) {
        threads.emplace_back([&, rank] {
            auto const index = static_cast<std::size_t>(rank);
            auto& communicator = *group[index];
            Context context(pool, communicator.buffer_resource());
            shuffle::Shuffler shuffler(communicator, 1, partitions, communicator.buffer_resource());
            Channel tables(context, ChannelLimits::unbounded());
            Channel shuffled(context, ChannelLimits{.messages = 2});
            std::vector<Actor> actors;
            actors.push_back(generate_lineitem(
                context, generator, static_cast<std::size_t>(rank), static_cast<std::size_t>(ranks), tables
            ));
            actors.push_back(
                by_name ? shuffle_tables_by_name(shuffler, {"l_orderkey"}, tables, shuffled, min_split_bytes)
                        : shuffle_tables(shuffler, std::vector<std::size_t>{0}, tables, shuffled, min_split_bytes)
            );
            actors.push_back(collect(context, shuffled, run.received[index]));
            try {
                run_actors(context, std::move(actors));
            } catch (Error const& error) {
                run.errors[index] = error.what();
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    for (auto const* resource : resources) {
        for (auto const* name : {"stream.messages.spill.bytes", "shuffle.received.spill.bytes"}) {
            if (auto const entry = resource->statistics().get(name)) {
                run.spilled += entry->total;
            }
        }
    }
    return run;
}

/// Expects every generated row in the partition its key hashes to, once.
void expect_shuffled(table::TpchGenerator const& generator, ShuffleRun const& run) {
    for (auto const& error : run.errors) {
        EXPECT_FALSE(error.has_value()) << *error;
    }
    table::TableChecksum generated;
    for (std::size_t chunk = 0; chunk < generator.num_chunks(); ++chunk) {
        generated += table::TableChecksum::of(generator.lineitem(chunk));
    }
    table::TableChecksum shuffled;
    std::size_t partitions_received = 0;
    for (auto const& rank : run.received) {
        EXPECT_EQ(rank.misplaced, 0U);
        for (auto const& [partition, checksum] : rank.partitions) {
            shuffled += checksum;
            ++partitions_received;
        }
    }
    EXPECT_EQ(partitions_received, partitions);  // every partition has rows
    EXPECT_EQ(shuffled, generated);
}

}  // namespace

TEST(ShuffleTables, EveryRowReachesItsPartitionOnceUnderALimitFarBelowTheData) {
    Watchdog const watchdog("a streaming shuffle of 3 ranks");
    // About 8 MB of lineitem in chunks of about 250 KB; each rank receives a
    // third of it before any partition completes, under a limit of 2 MiB.
    table::TpchGenerator const generator(0.01, 5, 500);
    auto const run = shuffle_over_ranks(generator, 3, 2 * mebibyte);
    expect_shuffled(generator, run);
    EXPECT_EQ(generator.num_chunks(), 30U);
    EXPECT_GT(run.spilled, 2.0 * mebibyte);
}

TEST(ShuffleTablesByName, ShufflesByTheColumnsOfTheGivenNames) {
    Watchdog const watchdog("a streaming shuffle of 3 ranks by a named key");
    table::TpchGenerator const generator(0.005, 6, 500);
    expect_shuffled(generator, shuffle_over_ranks(generator, 3, 8 * mebibyte, std::chrono::seconds(30), true));
}

TEST(ShuffleTables, SmallTablesAreSplitTogetherIntoFewerChunks) {
    Watchdog const watchdog("a streaming shuffle of 3 ranks splitting tables together");
    // 30 chunks of about 250 KB: each rank's 10 tables are split one by one,
    // or four at a time.
    table::TpchGenerator const generator(0.01, 5, 500);
    auto const messages = [](ShuffleRun const& run) {
        std::size_t count = 0;
        for (auto const& rank : run.received) {
            count += rank.messages;
        }
        return count;
    };
    auto const one_by_one = shuffle_over_ranks(generator, 3, 8 * mebibyte);
    expect_shuffled(generator, one_by_one);
    EXPECT_EQ(messages(one_by_one), 3 * 10 * partitions);
    auto const together =
        shuffle_over_ranks(generator, 3, 8 * mebibyte, std::chrono::seconds(30), false, mebibyte);
    expect_shuffled(generator, together);
    EXPECT_EQ(messages(together), 3 * 3 * partitions) << "each rank splits 4, 4 and 2 tables";
}

TEST(ShuffleTables, ALimitBelowWhatTheShuffleWorksInFailsWithOutOfMemoryInsteadOfHanging) {
    Watchdog const watchdog("a streaming shuffle under too small a limit");
    // The tables a rank works on at once take more than 512 KiB, and none of
    // them can spill.
    table::TpchGenerator const generator(0.01, 5, 500);
    auto const run = shuffle_over_ranks(generator, 3, 512 * kibibyte, std::chrono::seconds(1));
    bool out_of_memory = false;
    for (auto const& error : run.errors) {
        ASSERT_TRUE(error.has_value()) << "a rank finished under a limit below its working set";
        out_of_memory = out_of_memory || error->find("memory_limit_host") != std::string::npos;
    }
    EXPECT_TRUE(out_of_memory) << "no rank said which limit was too small";
}

TEST(ShuffleTables, AnAbortedPipelineStopsPollingAShuffleThatOtherRanksHaveNotFinished) {
    Watchdog const watchdog("a shuffle actor polling for ranks that go on");
    StreamMemory memory0;
    StreamMemory memory1;
    std::vector<memory::BufferResource*> resources{&memory0.resource, &memory1.resource};
    auto group = comm::LocalCommunicator::make_group(resources);
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    std::promise<void> rank0_done;
    // Rank 1 is alive, its shuffler sending heartbeats, but finishes nothing
    // until rank 0's pipeline has ended.
    std::thread rank1([&] {
        shuffle::Shuffler shuffler(*group[1], 1, partitions, memory1.resource);
        rank0_done.get_future().wait();
    });
    {
        Context context(pool, memory0.resource);
        shuffle::Shuffler shuffler(*group[0], 1, partitions, memory0.resource);
        Channel tables(context);
        tables.close();  // nothing to insert: the actor goes straight to polling
        Channel shuffled(context);
        std::vector<Actor> actors;
        actors.push_back(shuffle_tables(shuffler, std::vector<std::size_t>{0}, tables, shuffled));
        actors.push_back([](exec::Executor& executor) -> Actor {
            co_await executor.sleep_for(std::chrono::milliseconds(50));
            throw std::runtime_error("another actor failed");
        }(pool));
        EXPECT_THROW(run_actors(context, std::move(actors)), std::runtime_error);
        rank0_done.set_value();  // before the shufflers go, each waiting for the other's last word
    }
    rank1.join();
}

namespace {

/// Runs a one-rank pipeline of generated lineitem tables through the
/// shuffle actor `make_shuffle` makes, and expects it to fail with an
/// `InvalidArgument` holding `message` before anything arrives.
void expect_shuffle_fails(std::function<Actor(shuffle::Shuffler&, Channel&, Channel&)> const& make_shuffle,
                          std::string const& message) {
    StreamMemory memory;
    std::vector<memory::BufferResource*> resources{&memory.resource};
    auto group = comm::LocalCommunicator::make_group(resources);
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    Context context(pool, memory.resource);
    shuffle::Shuffler shuffler(*group[0], 1, partitions, memory.resource);
    Channel tables(context);
    Channel shuffled(context);
    table::TpchGenerator const generator(0.001);
    Received received;
    std::vector<Actor> actors;
    actors.push_back(generate_lineitem(context, generator, 0, 1, tables));
    actors.push_back(make_shuffle(shuffler, tables, shuffled));
    actors.push_back(collect(context, shuffled, received));
    EXPECT_THROW_WITH(run_actors(context, std::move(actors)), InvalidArgument, message);
    EXPECT_TRUE(received.partitions.empty());
}

}  // namespace

TEST(ShuffleTables, ATableWithoutTheKeyColumnFailsThePipelineNamingIt) {
    expect_shuffle_fails([](shuffle::Shuffler& shuffler, Channel& tables,
                            Channel& shuffled) { return shuffle_tables(shuffler, {99}, tables, shuffled); },
                         "99");
}

TEST(ShuffleTablesByName, ATableWithoutAKeyOfTheGivenNameFailsThePipelineNamingTheColumns) {
    expect_shuffle_fails(
        [](shuffle::Shuffler& shuffler, Channel& tables, Channel& shuffled) {
            return shuffle_tables_by_name(shuffler, {"o_orderkey"}, tables, shuffled);
        },
        "l_orderkey"
    );
}

TEST(AllGatherActor, EveryRankReceivesEveryRanksMessagesByRankThenSequence) {
    constexpr comm::Rank ranks = 3;
    constexpr std::uint64_t per_rank = 4;
    Watchdog const watchdog("a streaming all-gather of 3 ranks");
    std::vector<std::unique_ptr<StreamMemory>> memories;
    std::vector<memory::BufferResource*> resources;
    for (comm::Rank rank = 0; rank < ranks; ++rank) {
        memories.push_back(std::make_unique<StreamMemory>());
        resources.push_back(&memories.back()->resource);
    }
    auto group = comm::LocalCommunicator::make_group(resources);
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    // Rank r sends sequence numbers 100 r + 3, ..., 100 r (out of order).
    auto const original = [](comm::Rank rank, std::uint64_t index) { return 100 * static_cast<std::uint64_t>(rank) + index; };
    std::vector<std::vector<Message>> received(ranks);
    std::vector<std::thread> threads;
    for (comm::Rank rank = 0; rank < ranks; ++rank) {
        threads.emplace_back([&, rank] {
            auto const index = static_cast<std::size_t>(rank);
            auto& communicator = *group[index];
            Context context(pool, communicator.buffer_resource());
            shuffle::AllGather gather(communicator, 1, communicator.buffer_resource());
            Channel input(context, ChannelLimits::unbounded());
            Channel output(context);
            std::vector<Actor> actors;
            actors.push_back([](Context& ctx, Channel& out, comm::Rank r, auto number) -> Actor {
                CloseAtExit closer{&out};
                for (std::uint64_t i = per_rank; i-- > 0;) {
                    co_await out.send(test_message(ctx.resource(), number(r, i), 1000 + i));
                }
            }(context, input, rank, original));
            actors.push_back(all_gather(gather, input, output));
            actors.push_back([](Channel& in, std::vector<Message>& into) -> Actor {
                CloseAtExit closer{&in};
                while (std::optional<Message> message = co_await in.receive()) {
                    into.push_back(std::move(*message));
                }
            }(output, received[index]));
            try {
                run_actors(context, std::move(actors));
            } catch (Error const& error) {
                ADD_FAILURE() << "rank " << rank << ": " << error.what();
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    for (auto const& messages : received) {
        ASSERT_EQ(messages.size(), ranks * per_rank);
        std::size_t position = 0;
        for (comm::Rank rank = 0; rank < ranks; ++rank) {
            for (std::uint64_t i = 0; i < per_rank; ++i, ++position) {
                auto const& message = messages[position];
                EXPECT_EQ(message.sequence, position);
                EXPECT_EQ(message.payload.metadata, metadata_of(original(rank, i)));
                EXPECT_EQ(contents(message.payload.data), test_bytes(1000 + i, original(rank, i)));
            }
        }
    }
}
