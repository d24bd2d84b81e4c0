// transform_tables: a function over every table of a stream, on several
// workers at once, with the results in the stream's order.
#include <spillway/stream/transform.hpp>

#include <common/error_matchers.hpp>
#include <common/watchdog.hpp>

#include <atomic>
#include <optional>
#include <stdexcept>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/memory/host_allocator.hpp>
#include <spillway/stream/table_message.hpp>
#include <spillway/table/tpch_generator.hpp>

#include <gtest/gtest.h>

#include <exec/deterministic_executor.hpp>

#include "stream_test_support.hpp"

using namespace spillway;
using namespace spillway::stream;
using namespace spillway::test;

namespace {

/// The first half of a table's rows.
table::Table first_half(table::Table const& table) {
    return table.slice(0, table.num_rows() / 2);
}

/// Receives every message of `input`: their numbers, and whether each holds
/// the first half of its chunk.
Actor check(Context& context, table::TpchGenerator const& generator, Channel& input,
            std::vector<std::uint64_t>& received, bool& equal) {
    CloseAtExit closer{&input};
    while (std::optional<Message> message = co_await input.receive()) {
        memory::ScopedHostResource const scope(&context.resource());
        equal = equal && unpack_table(*message) == first_half(generator.lineitem(message->sequence));
        received.push_back(message->sequence);
    }
}

}  // namespace

TEST(TransformTables, ResultsComeOutInTheInputsOrderWhateverTheScheduleAndWorkers) {
    table::TpchGenerator const generator(0.002, 3, 300);
    for (std::uint64_t seed = 0; seed < 40; ++seed) {
        StreamMemory memory;
        RandomChooser chooser(seed);
        DeterministicExecutor executor(chooser);
        Context context(executor, memory.resource);
        Channel tables(context, ChannelLimits{.messages = 2});
        Channel results(context, ChannelLimits{.messages = 2});
        std::vector<std::uint64_t> received;
        bool equal = true;
        std::vector<Actor> actors = transform_tables(tables, results, first_half, 1 + seed % 4);
        actors.push_back(generate_lineitem(context, generator, 0, 1, tables));
        actors.push_back(check(context, generator, results, received, equal));
        run_actors(context, std::move(actors));
        ASSERT_EQ(received, iota(generator.num_chunks())) << "seed " << seed;
        EXPECT_TRUE(equal) << "seed " << seed;
        EXPECT_EQ(context.messages().size(), 0U);
    }
}

TEST(TransformTables, WorkersTransformTablesAtTheSameTime) {
    // Each call waits until another is running too: one worker at a time
    // would never get past the first table.
    Watchdog const watchdog("two workers that each wait for the other");
    table::TpchGenerator const generator(0.002, 3, 300);
    StreamMemory memory;
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    Context context(pool, memory.resource);
    Channel tables(context, ChannelLimits{.messages = 4});
    Channel results(context, ChannelLimits{.messages = 4});
    std::atomic<int> running{0};
    std::atomic<bool> met{false};
    auto const meeting = [&](table::Table const& table) {
        ++running;
        while (!met && running < 2) {
        }
        met = true;
        --running;
        return first_half(table);
    };
    std::vector<std::uint64_t> received;
    bool equal = true;
    std::vector<Actor> actors = transform_tables(tables, results, meeting, 2);
    actors.push_back(generate_lineitem(context, generator, 0, 1, tables));
    actors.push_back(check(context, generator, results, received, equal));
    run_actors(context, std::move(actors));
    EXPECT_TRUE(met.load());
    EXPECT_EQ(received, iota(generator.num_chunks()));
    EXPECT_TRUE(equal);
}

TEST(TransformTables, AFunctionThatThrowsFailsThePipelineWithItsError) {
    table::TpchGenerator const generator(0.002, 3, 300);
    StreamMemory memory;
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    Watchdog const watchdog("a transform whose function throws");
    Context context(pool, memory.resource);
    Channel tables(context);
    Channel results(context);
    std::atomic<int> calls{0};
    auto const failing = [&](table::Table const& table) {
        if (++calls == 3) {
            throw std::runtime_error("the function failed on its third table");
        }
        return first_half(table);
    };
    std::vector<std::uint64_t> received;
    bool equal = true;
    std::vector<Actor> actors = transform_tables(tables, results, failing, 2);
    actors.push_back(generate_lineitem(context, generator, 0, 1, tables));
    actors.push_back(check(context, generator, results, received, equal));
    EXPECT_THROW_WITH(run_actors(context, std::move(actors)), std::runtime_error, "third table");
    EXPECT_LT(received.size(), generator.num_chunks());
}

TEST(TransformTables, RejectsNoWorkersAndNoFunction) {
    StreamMemory memory;
    RandomChooser chooser(1);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel input(context);
    Channel output(context);
    EXPECT_THROW_WITH(transform_tables(input, output, first_half, 0), InvalidArgument, "at least one worker");
    EXPECT_THROW_WITH(transform_tables(input, output, nullptr, 1), InvalidArgument, "needs a function");
}
