// Pipelines of producers, a lineariser and a consumer on the deterministic
// executor: every schedule of small ones, and random schedules of larger
// ones, with an actor that fails, a consumer that stops early, and a stop
// request that cancels a receive. Each run checks that the pipeline ends
// (the executor aborts on a deadlock), that what arrives is in order and
// intact, that the error comes out, and that every message is freed.
#include <spillway/stream/actor.hpp>
#include <spillway/stream/lineariser.hpp>

#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <exec/deterministic_executor.hpp>

#include "stream_test_support.hpp"

using namespace spillway;
using namespace spillway::stream;
using namespace spillway::test;

namespace {

constexpr std::size_t message_bytes = 64;

/// One pipeline: its shape and what goes wrong in it.
struct Scenario {
    std::size_t producers = 2;
    std::size_t messages = 4;  ///< 0 .. messages-1, dealt round-robin to the producers
    std::size_t capacity = 1;  ///< of every channel
    std::optional<std::size_t> failing_message{};  ///< its producer throws instead of sending it
    std::optional<std::size_t> consumer_stops_after{};
    std::optional<std::size_t> cancel_after{};  ///< the consumer's receives are cancelled after this many

    [[nodiscard]] std::string describe() const {
        std::string text = std::to_string(producers) + " producers, " + std::to_string(messages)
                           + " messages, capacity " + std::to_string(capacity);
        if (failing_message) {
            text += ", message " + std::to_string(*failing_message) + " fails";
        }
        if (consumer_stops_after) {
            text += ", the consumer stops after " + std::to_string(*consumer_stops_after);
        }
        if (cancel_after) {
            text += ", receives cancelled after " + std::to_string(*cancel_after);
        }
        return text;
    }
};

Actor produce(Context& context, std::vector<std::uint64_t> sequences, Scenario const& scenario, Channel& output) {
    CloseAtExit closer{&output};
    for (auto const sequence : sequences) {
        if (scenario.failing_message == sequence) {
            throw std::runtime_error("message " + std::to_string(sequence));
        }
        if (!co_await output.send(test_message(context.resource(), sequence, message_bytes))) {
            co_return;
        }
    }
}

Actor consume(Channel& input, Scenario const& scenario, std::vector<std::uint64_t>& received) {
    CloseAtExit closer{&input};
    std::stop_source cancel;
    while (!scenario.consumer_stops_after || received.size() < *scenario.consumer_stops_after) {
        if (scenario.cancel_after == received.size()) {
            cancel.request_stop();
        }
        std::optional<Message> message = co_await input.receive(cancel.get_token());
        if (!message) {
            co_return;
        }
        expect_test_message(*message, message->sequence, message_bytes);
        received.push_back(message->sequence);
    }
}

/// Runs `scenario` once in the schedule `chooser` picks, and checks it.
void run(Scenario const& scenario, Chooser& chooser) {
    SCOPED_TRACE(scenario.describe());
    StreamMemory memory;
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    std::vector<std::uint64_t> received;
    std::optional<std::string> error;
    {
        std::vector<std::unique_ptr<Channel>> inputs;
        std::vector<Channel*> input_pointers;
        std::vector<Actor> actors;
        for (std::size_t producer = 0; producer < scenario.producers; ++producer) {
            std::vector<std::uint64_t> hand;
            for (std::uint64_t sequence = producer; sequence < scenario.messages; sequence += scenario.producers) {
                hand.push_back(sequence);
            }
            inputs.push_back(std::make_unique<Channel>(context, ChannelLimits{.messages = scenario.capacity}));
            input_pointers.push_back(inputs.back().get());
            actors.push_back(produce(context, std::move(hand), scenario, *inputs.back()));
        }
        Channel output(context, ChannelLimits{.messages = scenario.capacity});
        actors.push_back(linearise(std::move(input_pointers), output));
        actors.push_back(consume(output, scenario, received));
        try {
            run_actors(context, std::move(actors));
        } catch (std::runtime_error const& failure) {
            error = failure.what();
        }
    }
    // In order and without gaps: a merge never skips a message it has not
    // been offered, and a failed producer's messages stop at its failure.
    for (std::size_t index = 0; index < received.size(); ++index) {
        ASSERT_EQ(received[index], index);
    }
    std::size_t expected = scenario.messages;
    if (scenario.failing_message) {
        expected = std::min(expected, *scenario.failing_message);
        EXPECT_EQ(error, "message " + std::to_string(*scenario.failing_message));
    } else {
        EXPECT_FALSE(error.has_value()) << *error;
    }
    if (scenario.consumer_stops_after) {
        expected = std::min(expected, *scenario.consumer_stops_after);
    }
    if (scenario.cancel_after) {
        expected = std::min(expected, *scenario.cancel_after);
    }
    if (scenario.failing_message) {
        // What came before the failure may or may not have got through.
        EXPECT_LE(received.size(), expected);
    } else {
        EXPECT_EQ(received.size(), expected);
    }
    EXPECT_EQ(context.messages().size(), 0U);
    EXPECT_EQ(memory.resource.memory_used(memory::MemoryType::HOST), 0U);
}

/// Every schedule of `scenario`; returns how many ran.
std::size_t run_every_schedule(Scenario const& scenario) {
    ExhaustiveChooser chooser;
    do {
        run(scenario, chooser);
        if (::testing::Test::HasFailure()) {
            break;
        }
    } while (chooser.next_schedule());
    return chooser.schedules();
}

}  // namespace

TEST(PipelineSchedules, EveryScheduleOfSmallPipelinesDeliversEverythingInOrder) {
    std::size_t schedules = 0;
    for (std::size_t messages = 1; messages <= 4; ++messages) {
        schedules += run_every_schedule(Scenario{.messages = messages});
    }
    EXPECT_GT(schedules, 100U);
}

TEST(PipelineSchedules, EveryScheduleEndsWhenAProducerFails) {
    for (std::size_t failing = 0; failing < 3; ++failing) {
        run_every_schedule(Scenario{.messages = 3, .failing_message = failing});
    }
}

TEST(PipelineSchedules, EveryScheduleEndsWhenTheConsumerStopsOrIsCancelled) {
    for (std::size_t after = 0; after < 3; ++after) {
        run_every_schedule(Scenario{.messages = 3, .consumer_stops_after = after});
        run_every_schedule(Scenario{.messages = 3, .cancel_after = after});
    }
}

TEST(PipelineSchedules, RandomSchedulesOfLargerPipelinesHoldTheSameProperties) {
    for (std::uint64_t seed = 0; seed < 300; ++seed) {
        std::mt19937_64 random(seed);
        auto const pick = [&](std::size_t below) { return static_cast<std::size_t>(random() % below); };
        Scenario scenario{.producers = 1 + pick(4), .messages = 1 + pick(40), .capacity = 1 + pick(3)};
        switch (pick(4)) {
            case 0:
                scenario.failing_message = pick(scenario.messages);
                break;
            case 1:
                scenario.consumer_stops_after = pick(40);
                break;
            case 2:
                scenario.cancel_after = pick(40);
                break;
            default:
                break;
        }
        RandomChooser chooser(seed);
        run(scenario, chooser);
        if (::testing::Test::HasFailure()) {
            FAIL() << "seed " << seed;
        }
    }
}
