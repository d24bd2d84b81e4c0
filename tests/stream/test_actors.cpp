// Actors: run_actors, CloseAtExit, linearise, fanout, route_by_sequence and
// merge, each on the deterministic executor over many schedules, and on a
// real pool.
#include <spillway/stream/actor.hpp>
#include <spillway/stream/fanout.hpp>
#include <spillway/stream/lineariser.hpp>
#include <spillway/stream/reserve_memory.hpp>
#include <spillway/stream/routing.hpp>

#include <common/error_matchers.hpp>
#include <common/watchdog.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/exec/event.hpp>
#include <spillway/exec/sync_wait.hpp>
#include <spillway/exec/task_group.hpp>
#include <spillway/exec/thread_pool.hpp>

#include <gtest/gtest.h>

#include <exec/deterministic_executor.hpp>

#include "stream_test_support.hpp"

using namespace spillway;
using namespace spillway::stream;
using namespace spillway::test;

namespace {

constexpr std::size_t message_bytes = 1000;

/// Sends `sequences` of `message_bytes` each into `output`, then closes it.
Actor produce(Context& context, std::vector<std::uint64_t> sequences, Channel& output) {
    CloseAtExit closer{&output};
    for (auto const sequence : sequences) {
        if (!co_await output.send(test_message(context.resource(), sequence, message_bytes))) {
            co_return;
        }
    }
}

/// Receives every message of `input` into `received`, checking its bytes.
Actor consume(Channel& input, std::vector<std::uint64_t>& received) {
    CloseAtExit closer{&input};
    while (std::optional<Message> message = co_await input.receive()) {
        expect_test_message(*message, message->sequence, message_bytes);
        received.push_back(message->sequence);
    }
}

/// 0, 1, ..., count - 1 dealt round-robin to `producers` producers.
std::vector<std::vector<std::uint64_t>> dealt(std::size_t count, std::size_t producers) {
    std::vector<std::vector<std::uint64_t>> hands(producers);
    for (std::uint64_t sequence = 0; sequence < count; ++sequence) {
        hands[sequence % producers].push_back(sequence);
    }
    return hands;
}

/// The numbers of `sequences` that leave `residue` divided by `modulus`, in order.
std::vector<std::uint64_t> with_residue(std::vector<std::uint64_t> const& sequences, std::size_t modulus,
                                        std::size_t residue) {
    std::vector<std::uint64_t> kept;
    std::copy_if(sequences.begin(), sequences.end(), std::back_inserter(kept),
                 [&](std::uint64_t sequence) { return sequence % modulus == residue; });
    return kept;
}

/// Channels of one test, owned together, and the pointers actors take.
struct Channels {
    std::vector<std::unique_ptr<Channel>> owned;
    std::vector<Channel*> pointers;

    /// A new channel of `limits` in `context`.
    Channel& add(Context& context, ChannelLimits limits) {
        owned.push_back(std::make_unique<Channel>(context, limits));
        pointers.push_back(owned.back().get());
        return *owned.back();
    }
};

/// A channel of `limits` for each hand of `hands`, fed by a producer of
/// that hand, which joins `actors`.
Channels produced_channels(Context& context, std::vector<std::vector<std::uint64_t>> const& hands,
                           ChannelLimits limits, std::vector<Actor>& actors) {
    Channels channels;
    for (auto const& hand : hands) {
        actors.push_back(produce(context, hand, channels.add(context, limits)));
    }
    return channels;
}

/// `received.size()` channels of `limits`, channel i drained into
/// `received[i]` by a consumer, which joins `actors`.
Channels consumed_channels(Context& context, std::vector<std::vector<std::uint64_t>>& received,
                           ChannelLimits limits, std::vector<Actor>& actors) {
    Channels channels;
    for (auto& into : received) {
        actors.push_back(consume(channels.add(context, limits), into));
    }
    return channels;
}

}  // namespace

TEST(Linearise, MergesProducersBackIntoSequenceOrderInEverySchedule) {
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
        StreamMemory memory;
        RandomChooser chooser(seed);
        DeterministicExecutor executor(chooser);
        Context context(executor, memory.resource);
        std::size_t const producers = 1 + seed % 4;
        std::vector<Actor> actors;
        auto const inputs =
            produced_channels(context, dealt(30, producers), ChannelLimits{.messages = 1 + seed % 3}, actors);
        Channel output(context, ChannelLimits{.messages = 2});
        std::vector<std::uint64_t> received;
        actors.push_back(linearise(inputs.pointers, output));
        actors.push_back(consume(output, received));
        run_actors(context, std::move(actors));
        ASSERT_EQ(received, iota(30)) << "seed " << seed;
        EXPECT_EQ(context.messages().size(), 0U);
    }
}

TEST(Linearise, KeepsMessagesOfEqualNumbersTogetherInTheOrderOfTheirInputs) {
    StreamMemory memory;
    RandomChooser chooser(10);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel first(context);
    Channel second(context);
    Channel output(context);
    std::vector<std::uint64_t> received;
    std::vector<Actor> actors;
    actors.push_back(produce(context, {0, 0, 2}, first));
    actors.push_back(produce(context, {1, 1, 2}, second));
    actors.push_back(linearise({&first, &second}, output));
    actors.push_back(consume(output, received));
    run_actors(context, std::move(actors));
    EXPECT_EQ(received, (std::vector<std::uint64_t>{0, 0, 1, 1, 2, 2}));
}

TEST(Linearise, MovesSpilledMessagesWithoutReadingThemBack) {
    StreamMemory memory;
    RandomChooser chooser(1);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel first(context, ChannelLimits::unbounded());
    Channel second(context, ChannelLimits::unbounded());
    Channel output(context, ChannelLimits::unbounded());
    run_actors(context, [&] {
        std::vector<Actor> actors;
        actors.push_back(produce(context, {0, 2, 4}, first));
        actors.push_back(produce(context, {1, 3}, second));
        return actors;
    }());
    auto const spilled = context.resource().spill_manager().spill(5 * message_bytes);
    ASSERT_EQ(spilled, 5 * message_bytes);
    run_actors(context, [&] {
        std::vector<Actor> actors;
        actors.push_back(linearise({&first, &second}, output));
        return actors;
    }());
    EXPECT_EQ(output.size(), 5U);
    EXPECT_EQ(context.messages().bytes(memory::MemoryType::DISK), 5 * message_bytes);
    EXPECT_FALSE(memory.resource.statistics().get("stream.messages.unspill.bytes").has_value());
    std::vector<std::uint64_t> received;
    run_actors(context, [&] {
        std::vector<Actor> actors;
        actors.push_back(consume(output, received));
        return actors;
    }());
    EXPECT_EQ(received, iota(5));
}

TEST(Linearise, FailsNamingTheInputWhoseSequenceNumbersDoNotIncrease) {
    StreamMemory memory;
    RandomChooser chooser(2);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    {
        Channel first(context);
        Channel second(context);
        Channel output(context);
        std::vector<std::uint64_t> received;
        std::vector<Actor> actors;
        actors.push_back(produce(context, {0, 2, 4, 6, 8}, first));
        actors.push_back(produce(context, {1, 5, 3, 7}, second));
        actors.push_back(linearise({&first, &second}, output));
        actors.push_back(consume(output, received));
        EXPECT_THROW_WITH(
            run_actors(context, std::move(actors)), InvalidArgument, "input 1 sent sequence number 3 after 5"
        );
        EXPECT_TRUE(first.closed() && second.closed() && output.closed());
    }
    // What the closed channels still held went with them.
    EXPECT_EQ(context.messages().size(), 0U);
    EXPECT_EQ(memory.resource.memory_used(memory::MemoryType::HOST), 0U);
}

TEST(Linearise, StopsAndStopsItsProducersWhenItsConsumerStops) {
    StreamMemory memory;
    RandomChooser chooser(3);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    {
        Channel first(context, ChannelLimits{.messages = 1});
        Channel second(context, ChannelLimits{.messages = 1});
        Channel output(context, ChannelLimits{.messages = 1});
        std::vector<Actor> actors;
        actors.push_back(produce(context, iota(1000), first));
        actors.push_back(produce(context, iota(1000), second));
        actors.push_back(linearise({&first, &second}, output));
        actors.push_back([](Channel& input) -> Actor {
            CloseAtExit closer{&input};
            std::optional<Message> message = co_await input.receive();
            EXPECT_TRUE(message.has_value());
        }(output));
        run_actors(context, std::move(actors));  // the deterministic executor aborts on a hang
        // At most one message waits in each channel.
        EXPECT_LE(context.messages().size(), 3U);
    }
    EXPECT_EQ(context.messages().size(), 0U);
    EXPECT_EQ(memory.resource.memory_used(memory::MemoryType::HOST), 0U);
}

TEST(RunActors, AFailedProducerAbortsItsConsumerInsteadOfEndingItsStream) {
    // A sink that commits its output at the end of its input must not
    // commit after its producer failed, in any schedule.
    for (std::uint64_t seed = 0; seed < 50; ++seed) {
        StreamMemory memory;
        RandomChooser chooser(seed);
        DeterministicExecutor executor(chooser);
        Context context(executor, memory.resource);
        Channel channel(context, ChannelLimits{.messages = 1 + seed % 3});
        bool committed = false;
        std::vector<Actor> actors;
        actors.push_back([](Context& ctx, Channel& output) -> Actor {
            CloseAtExit closer{&output};
            for (std::uint64_t sequence = 0; sequence < 3; ++sequence) {
                co_await output.send(test_message(ctx.resource(), sequence, message_bytes));
            }
            throw std::runtime_error("the producer failed after its last message");
        }(context, channel));
        std::vector<std::uint64_t> received;
        actors.push_back([](Channel& input, std::vector<std::uint64_t>& into, bool& commit) -> Actor {
            CloseAtExit closer{&input};
            while (std::optional<Message> message = co_await input.receive()) {
                into.push_back(message->sequence);
            }
            commit = true;
        }(channel, received, committed));
        EXPECT_THROW_WITH(
            run_actors(context, std::move(actors)), std::runtime_error, "the producer failed after its last message"
        );
        EXPECT_FALSE(committed) << "seed " << seed;
        EXPECT_TRUE(context.aborted());
        EXPECT_EQ(context.messages().size(), 0U);
    }
}

TEST(CloseAtExit, ClosesItsChannelsAndAbortsTheirContextOnlyIfItsActorFails) {
    StreamMemory memory;
    RandomChooser chooser(8);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel first(context);
    Channel second(context);
    auto const actor = [](Channel& one, Channel& two, bool fail) -> Actor {
        CloseAtExit closer{&one, &two};
        if (fail) {
            throw std::runtime_error("the actor failed");
        }
        co_return;
    };
    exec::sync_wait(executor, actor(first, second, false));
    EXPECT_TRUE(first.closed() && second.closed());
    EXPECT_FALSE(context.aborted());
    Channel third(context);
    EXPECT_THROW_WITH(exec::sync_wait(executor, actor(third, third, true)), std::runtime_error, "the actor failed");
    EXPECT_TRUE(context.aborted());
}

/// A `Work` that calls `action` when it runs, as an executor runs the step of
/// a coroutine.
class CallingWork final : public exec::Work {
  public:
    explicit CallingWork(std::function<void()> action) : Work(&call), action_(std::move(action)) {}

  private:
    static void call(Work& work) noexcept { static_cast<CallingWork&>(work).action_(); }
    std::function<void()> action_;
};

/// Calls `action` while the thread unwinds an exception (`what`), from a
/// destructor, then catches it.
void while_unwinding(std::string const& what, std::function<void()> const& action) {
    struct CallsWhenDestroyed {
        std::function<void()> const& action;
        ~CallsWhenDestroyed() { action(); }
    };
    try {
        CallsWhenDestroyed const calls{action};
        throw std::runtime_error(what);
    } catch (std::runtime_error const&) {
    }
}

// An executor may resume an actor on another thread than the one that began
// it, and that thread may be unwinding an exception of its own (a thread that
// runs the pool's work while it waits, called from a destructor): what the
// actor's guard sees in flight at its end is not comparable with what it saw
// at its start, only with what was in flight when the work began.
TEST(CloseAtExit, AnActorThatEndsWellInWorkRunWhileItsThreadUnwindsAbortsNothing) {
    StreamMemory memory;
    RandomChooser chooser(8);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel channel(context);
    std::optional<CloseAtExit> closer;
    closer.emplace({&channel});
    CallingWork ends([&] { closer.reset(); });
    while_unwinding("another failure, on the thread that runs the actor's end", [&] { ends.run(); });
    EXPECT_TRUE(channel.closed());
    EXPECT_FALSE(context.aborted()) << "the actor did not fail";
}

TEST(CloseAtExit, AnActorThatFailsInWorkAbortsItsContextThoughItBeganWhileItsThreadUnwound) {
    StreamMemory memory;
    RandomChooser chooser(8);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel channel(context);
    std::optional<CloseAtExit> closer;
    while_unwinding("another failure, on the thread that began the actor", [&] { closer.emplace({&channel}); });
    CallingWork fails([&] { while_unwinding("the actor failed", [&] { closer.reset(); }); });
    fails.run();
    EXPECT_TRUE(channel.closed());
    EXPECT_TRUE(context.aborted()) << "the actor failed: its consumers must see the failure, not an end";
}

TEST(RunActors, AbortsThePipelineWhenAnActorWithoutChannelsFails) {
    StreamMemory memory;
    RandomChooser chooser(9);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel channel(context, ChannelLimits{.messages = 1});
    exec::Event five_received(executor);
    std::vector<std::uint64_t> received;
    std::vector<Actor> actors;
    actors.push_back([](exec::Event& event) -> Actor {
        co_await event.wait();
        throw std::runtime_error("a watcher failed");
    }(five_received));
    actors.push_back(produce(context, iota(1000), channel));
    actors.push_back([](Channel& input, std::vector<std::uint64_t>& into, exec::Event& event) -> Actor {
        CloseAtExit closer{&input};
        while (std::optional<Message> message = co_await input.receive()) {
            into.push_back(message->sequence);
            if (into.size() == 5) {
                event.set();
            }
        }
    }(channel, received, five_received));
    EXPECT_THROW_WITH(run_actors(context, std::move(actors)), std::runtime_error, "a watcher failed");
    EXPECT_LT(received.size(), 1000U);
}

TEST(RunActors, AChannelOfAnAbortedPipelineIsClosedAndItsReceivesThrow) {
    StreamMemory memory;
    RandomChooser chooser(4);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel before(context, ChannelLimits::unbounded());
    exec::sync_wait(executor, before.send(test_message(memory.resource, 0, message_bytes)));
    context.abort();
    EXPECT_TRUE(before.closed());
    EXPECT_EQ(before.size(), 0U);
    EXPECT_EQ(context.messages().size(), 0U);
    Channel after(context);
    EXPECT_TRUE(after.closed());
    EXPECT_FALSE(exec::sync_wait(executor, after.send(test_message(memory.resource, 1, message_bytes))));
    EXPECT_THROW_WITH(exec::sync_wait(executor, before.receive()), PipelineAborted, "another of its actors failed");
    EXPECT_THROW_WITH(exec::sync_wait(executor, after.receive_parked()), PipelineAborted, "aborted");
    EXPECT_EQ(memory.resource.memory_used(memory::MemoryType::HOST), 0U);
}

TEST(RunActors, AFailingConsumerStopsItsProducerAndItsErrorComesOut) {
    StreamMemory memory;
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    Watchdog const watchdog("a pipeline whose consumer failed");
    Context context(pool, memory.resource);
    {
        Channel channel(context, ChannelLimits{.messages = 2});
        std::vector<Actor> actors;
        actors.push_back(produce(context, iota(100000), channel));
        actors.push_back([](Channel& input) -> Actor {
            CloseAtExit closer{&input};
            for (int i = 0; i < 10; ++i) {
                co_await input.receive();
            }
            throw CorruptData("the consumer found bad data");
        }(channel));
        EXPECT_THROW_WITH(run_actors(context, std::move(actors)), CorruptData, "the consumer found bad data");
        EXPECT_LE(channel.size(), 2U);
    }
    EXPECT_EQ(context.messages().size(), 0U);
    EXPECT_EQ(memory.resource.memory_used(memory::MemoryType::HOST), 0U);
}

TEST(Fanout, GivesEveryOutputEveryMessageInOrderInEverySchedule) {
    for (std::uint64_t seed = 0; seed < 100; ++seed) {
        for (auto const policy : {FanoutPolicy::bounded, FanoutPolicy::unbounded}) {
            StreamMemory memory;
            RandomChooser chooser(seed);
            DeterministicExecutor executor(chooser);
            Context context(executor, memory.resource);
            Channel input(context, ChannelLimits{.messages = 2});
            std::vector<std::vector<std::uint64_t>> received(1 + seed % 3);
            std::vector<Actor> actors;
            actors.push_back(produce(context, iota(20), input));
            auto const outputs = consumed_channels(context, received, ChannelLimits{.messages = 1}, actors);
            for (Actor& actor : fanout(input, outputs.pointers, policy)) {
                actors.push_back(std::move(actor));
            }
            run_actors(context, std::move(actors));
            for (auto const& sequences : received) {
                ASSERT_EQ(sequences, iota(20)) << "seed " << seed;
            }
            EXPECT_EQ(context.messages().size(), 0U);
            EXPECT_EQ(memory.resource.memory_used(memory::MemoryType::HOST), 0U);
        }
    }
}

TEST(Fanout, UnboundedLetsAFastConsumerFinishWhileASlowOneHasTakenNothing) {
    for (auto const policy : {FanoutPolicy::bounded, FanoutPolicy::unbounded}) {
        StreamMemory memory;
        RandomChooser chooser(5);
        DeterministicExecutor executor(chooser);
        Context context(executor, memory.resource);
        Channel input(context, ChannelLimits{.messages = 1});
        Channel slow(context, ChannelLimits{.messages = 1});
        Channel fast(context, ChannelLimits{.messages = 1});
        std::vector<std::uint64_t> received;
        std::vector<Actor> actors = fanout(input, {&slow, &fast}, policy);
        actors.push_back(produce(context, iota(10), input));
        actors.push_back(consume(fast, received));
        exec::TaskGroup group(executor);
        for (Actor& actor : actors) {
            group.spawn([actor = std::move(actor)](std::stop_token const&) mutable { return std::move(actor); });
        }
        // Nobody reads `slow` yet.
        for (int step = 0; step < 10000 && executor.step(); ++step) {
        }
        if (policy == FanoutPolicy::unbounded) {
            EXPECT_EQ(received, iota(10));
            EXPECT_EQ(slow.size(), 1U);
        } else {
            // The fanout waits for the slow output after two messages (one in
            // the channel, one in the waiting send).
            EXPECT_LE(received.size(), 2U);
        }
        std::vector<std::uint64_t> slowly;
        group.spawn([&](std::stop_token const&) { return consume(slow, slowly); });
        group.wait();
        EXPECT_EQ(slowly, iota(10));
        EXPECT_EQ(received, iota(10));
    }
}

TEST(Fanout, GoesOnForTheOutputsStillOpenWhenOneCloses) {
    StreamMemory memory;
    RandomChooser chooser(6);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    for (auto const policy : {FanoutPolicy::bounded, FanoutPolicy::unbounded}) {
        Channel input(context, ChannelLimits{.messages = 1});
        Channel closed(context);
        Channel open(context);
        closed.close();
        std::vector<std::uint64_t> received;
        std::vector<Actor> actors = fanout(input, {&closed, &open}, policy);
        actors.push_back(produce(context, iota(10), input));
        actors.push_back(consume(open, received));
        run_actors(context, std::move(actors));
        EXPECT_EQ(received, iota(10));
        EXPECT_EQ(context.messages().size(), 0U);
    }
}

TEST(Fanout, RejectsNoOutputsAndAChannelNamedTwice) {
    StreamMemory memory;
    RandomChooser chooser(7);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel input(context);
    Channel output(context);
    EXPECT_THROW_WITH(fanout(input, {}, FanoutPolicy::bounded), InvalidArgument, "at least one output");
    EXPECT_THROW_WITH(fanout(input, {&output, &output}, FanoutPolicy::unbounded), InvalidArgument, "twice");
    EXPECT_THROW_WITH(fanout(input, {&input}, FanoutPolicy::bounded), InvalidArgument, "twice");
}

TEST(Fanout, CopiesWaitForMemoryInsteadOfOverbooking) {
    // Two outputs of 1 MiB messages under a 3 MiB limit: every copy needs
    // room that only the consumers free.
    StreamMemory memory(3 * mebibyte);
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    Watchdog const watchdog("a fanout whose copies wait for memory");
    Context context(pool, memory.resource);
    Channel input(context, ChannelLimits{.messages = 1});
    Channel first(context, ChannelLimits{.messages = 1});
    Channel second(context, ChannelLimits{.messages = 1});
    std::vector<Actor> actors = fanout(input, {&first, &second}, FanoutPolicy::bounded);
    actors.push_back([](Context& ctx, Channel& output) -> Actor {
        CloseAtExit closer{&output};
        for (std::uint64_t sequence = 0; sequence < 8; ++sequence) {
            auto reservation = co_await reserve_memory(ctx.resource(), ctx.executor(), mebibyte);
            auto buffer = ctx.resource().make_buffer(mebibyte, reservation);
            std::ranges::copy(test_bytes(mebibyte, sequence), buffer.data().begin());
            Message message{
                .sequence = sequence,
                .payload = shuffle::PackedData{.metadata = metadata_of(sequence), .data = std::move(buffer)},
            };
            co_await output.send(std::move(message));
        }
    }(context, input));
    std::vector<std::uint64_t> first_received;
    std::vector<std::uint64_t> second_received;
    auto const checking = [](Channel& channel, std::vector<std::uint64_t>& received) -> Actor {
        CloseAtExit closer{&channel};
        while (std::optional<Message> message = co_await channel.receive()) {
            expect_test_message(*message, message->sequence, mebibyte);
            received.push_back(message->sequence);
        }
    };
    actors.push_back(checking(first, first_received));
    actors.push_back(checking(second, second_received));
    run_actors(context, std::move(actors));
    EXPECT_EQ(first_received, iota(8));
    EXPECT_EQ(second_received, iota(8));
    EXPECT_LE(memory.resource.peak_memory_used(memory::MemoryType::HOST), 3 * mebibyte);
}

TEST(RouteBySequence, SendsEachMessageToItsNumbersOutputInOrderInEverySchedule) {
    for (std::uint64_t seed = 0; seed < 100; ++seed) {
        StreamMemory memory;
        RandomChooser chooser(seed);
        DeterministicExecutor executor(chooser);
        Context context(executor, memory.resource);
        std::size_t const lanes = 1 + seed % 3;
        // Each number twice in a row, as a partition's chunks come.
        std::vector<std::uint64_t> sequences;
        for (std::uint64_t sequence = 0; sequence < 20; ++sequence) {
            sequences.insert(sequences.end(), 2, sequence);
        }
        Channel input(context, ChannelLimits{.messages = 1 + seed % 2});
        std::vector<std::vector<std::uint64_t>> received(lanes);
        std::vector<Actor> actors;
        actors.push_back(produce(context, sequences, input));
        auto const outputs = consumed_channels(context, received, ChannelLimits{.messages = 1}, actors);
        actors.push_back(route_by_sequence(input, outputs.pointers));
        run_actors(context, std::move(actors));
        for (std::size_t lane = 0; lane < lanes; ++lane) {
            ASSERT_EQ(received[lane], with_residue(sequences, lanes, lane)) << "seed " << seed << ", lane " << lane;
        }
        EXPECT_EQ(context.messages().size(), 0U);
    }
}

TEST(RouteBySequence, StopsItselfAndItsProducerAtItsNextMessageOnceAnyOutputHasClosed) {
    StreamMemory memory;
    RandomChooser chooser(7);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    {
        Channel input(context, ChannelLimits{.messages = 1});
        Channel kept(context);
        Channel closed(context);
        closed.close();
        std::vector<std::uint64_t> received;
        std::vector<Actor> actors;
        // Even sequence numbers: every message is for `kept`, none for `closed`.
        actors.push_back(produce(context, {0, 2, 4, 6, 8, 10}, input));
        actors.push_back(route_by_sequence(input, {&kept, &closed}));
        actors.push_back(consume(kept, received));
        run_actors(context, std::move(actors));
        EXPECT_EQ(received, std::vector<std::uint64_t>{}) << "an output had closed before the first message";
        EXPECT_TRUE(input.closed() && kept.closed());
    }
    EXPECT_EQ(context.messages().size(), 0U);
    EXPECT_EQ(memory.resource.memory_used(memory::MemoryType::HOST), 0U);
}

TEST(Merge, PassesEveryMessageOnceEachInputInItsOrderAndEndsAfterTheLastInputInEverySchedule) {
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
        StreamMemory memory;
        RandomChooser chooser(seed);
        DeterministicExecutor executor(chooser);
        Context context(executor, memory.resource);
        std::size_t const producers = 1 + seed % 4;
        std::vector<Actor> actors;
        // Producer p sends p, p + producers, ...: increasing, so that its order shows.
        auto const hands = dealt(30, producers);
        auto const inputs = produced_channels(context, hands, ChannelLimits{.messages = 1 + seed % 3}, actors);
        Channel output(context, ChannelLimits{.messages = 1});
        std::vector<std::uint64_t> received;
        for (Actor& actor : merge(inputs.pointers, output)) {
            actors.push_back(std::move(actor));
        }
        actors.push_back(consume(output, received));
        run_actors(context, std::move(actors));
        for (std::size_t producer = 0; producer < producers; ++producer) {
            ASSERT_EQ(with_residue(received, producers, producer), hands[producer]) << "seed " << seed;
        }
        ASSERT_EQ(received.size(), 30U) << "seed " << seed;
        EXPECT_EQ(context.messages().size(), 0U);
    }
}

TEST(Merge, LetsAFastInputThroughWhileASlowOneHasSentNothing) {
    Watchdog const watchdog("merge of a fast and a stalled input");
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    StreamMemory memory;
    Context context(pool, memory.resource);
    Channel fast(context);
    Channel slow(context);
    Channel output(context, ChannelLimits::unbounded());
    exec::Event fast_done(pool);
    std::vector<std::uint64_t> received;
    std::vector<Actor> actors;
    actors.push_back(produce(context, iota(20), fast));
    for (Actor& actor : merge({&slow, &fast}, output)) {
        actors.push_back(std::move(actor));
    }
    actors.push_back([](Channel& input, std::vector<std::uint64_t>& got, exec::Event& done) -> Actor {
        CloseAtExit closer{&input};
        while (got.size() < 20) {
            std::optional<Message> message = co_await input.receive();
            EXPECT_TRUE(message.has_value());
            got.push_back(message->sequence);
        }
        done.set();
        // The merge ends only once the slow input has ended too.
        EXPECT_FALSE((co_await input.receive()).has_value());
    }(output, received, fast_done));
    actors.push_back([](Channel& input, exec::Event& done) -> Actor {
        CloseAtExit closer{&input};
        co_await done.wait();
        EXPECT_FALSE(input.closed()) << "the merge's output was closed while an input was still open";
    }(slow, fast_done));
    run_actors(context, std::move(actors));
    EXPECT_EQ(received, iota(20));
}

TEST(RouteBySequenceAndMerge, RejectNoChannelsAndAMergeIntoOneOfItsInputs) {
    StreamMemory memory;
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 1});
    Context context(pool, memory.resource);
    Channel input(context);
    EXPECT_THROW_WITH((void)route_by_sequence(input, {}), InvalidArgument, "at least one output");
    EXPECT_THROW_WITH((void)merge({}, input), InvalidArgument, "at least one input");
    Channel other(context);
    EXPECT_THROW_WITH((void)merge({&other, &input}, input), InvalidArgument, "among its inputs");
}
