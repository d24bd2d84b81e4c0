// stream::Channel: a bounded queue of messages whose waiting messages are
// parked in the pipeline's SpillableMessages, where they may spill.
#include <spillway/stream/channel.hpp>

#include <common/error_matchers.hpp>
#include <common/event.hpp>
#include <common/fault_injecting_file_operations.hpp>
#include <common/watchdog.hpp>

#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/exec/sync_wait.hpp>
#include <spillway/exec/task_group.hpp>
#include <spillway/exec/thread_pool.hpp>

#include <gtest/gtest.h>

#include <exec/deterministic_executor.hpp>

#include "stream_test_support.hpp"

using namespace spillway;
using namespace spillway::stream;
using namespace spillway::test;
using namespace std::chrono_literals;

namespace {

/// Spills every message waiting in `context`'s channels; returns the bytes.
std::size_t spill_all(Context& context) {
    return context.resource().spill_manager().spill(context.messages().bytes(memory::MemoryType::HOST));
}

}  // namespace

TEST(StreamChannel, DeliversMessagesInOrderWithTheirBytes) {
    StreamMemory memory;
    RandomChooser chooser(1);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel channel(context, ChannelLimits{.messages = 3});
    std::vector<std::uint64_t> received;
    exec::TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> exec::Task<void> {
        for (std::uint64_t sequence = 0; sequence < 20; ++sequence) {
            EXPECT_TRUE(co_await channel.send(test_message(memory.resource, sequence, 100 * sequence)));
        }
        channel.close();
    });
    group.spawn([&](std::stop_token const&) -> exec::Task<void> {
        while (std::optional<Message> message = co_await channel.receive()) {
            expect_test_message(*message, received.size(), 100 * received.size());
            received.push_back(message->sequence);
        }
    });
    group.wait();
    EXPECT_EQ(received.size(), 20U);
    EXPECT_EQ(context.messages().size(), 0U);
    EXPECT_EQ(memory.resource.memory_used(memory::MemoryType::HOST), 0U);
}

TEST(StreamChannel, IsBoundedByMessagesAndByBytes) {
    StreamMemory memory;
    RandomChooser chooser(2);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    // Each message takes 100 bytes of buffer and 8 of metadata.
    Channel by_bytes(context, ChannelLimits{.messages = 10, .bytes = 250});
    Channel by_count(context, ChannelLimits{.messages = 3});
    std::size_t sent_by_bytes = 0;
    std::size_t sent_by_count = 0;
    exec::TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> exec::Task<void> {
        for (std::uint64_t sequence = 0; sequence < 5; ++sequence) {
            co_await by_bytes.send(test_message(memory.resource, sequence, 100));
            ++sent_by_bytes;
        }
    });
    group.spawn([&](std::stop_token const&) -> exec::Task<void> {
        for (std::uint64_t sequence = 0; sequence < 5; ++sequence) {
            co_await by_count.send(test_message(memory.resource, sequence, 100));
            ++sent_by_count;
        }
    });
    executor.run_until_idle();
    EXPECT_EQ(sent_by_bytes, 2U);
    EXPECT_EQ(by_bytes.size(), 2U);
    EXPECT_EQ(by_bytes.bytes(), 216U);
    EXPECT_EQ(sent_by_count, 3U);
    EXPECT_EQ(by_count.size(), 3U);
    by_bytes.close();
    by_count.close();
    group.wait();
}

TEST(StreamChannel, WaitingMessagesSpillWhenHostRunsShortAndComeBackIntact) {
    constexpr std::size_t count = 16;
    StreamMemory memory(4 * mebibyte);
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    Context context(pool, memory.resource);
    Channel channel(context, ChannelLimits::unbounded());
    exec::sync_wait(pool, [&]() -> exec::Task<void> {
        for (std::uint64_t sequence = 0; sequence < count; ++sequence) {
            // Room for the next message comes from spilling the waiting ones.
            auto reservation = memory.resource.reserve_and_spill(
                memory::MemoryType::HOST, mebibyte, memory::AllowOverbooking::no
            );
            auto buffer = memory.resource.make_buffer(mebibyte, reservation);
            std::ranges::copy(test_bytes(mebibyte, sequence), buffer.data().begin());
            // Named: g++ 12 destroys a braced temporary in a co_await twice.
            Message message{
                .sequence = sequence,
                .payload = shuffle::PackedData{.metadata = metadata_of(sequence), .data = std::move(buffer)},
            };
            EXPECT_TRUE(co_await channel.send(std::move(message)));
        }
        channel.close();
        EXPECT_GE(context.messages().bytes(memory::MemoryType::DISK), (count - 4) * mebibyte);
        for (std::uint64_t sequence = 0; sequence < count; ++sequence) {
            std::optional<Message> message = co_await channel.receive();
            EXPECT_TRUE(message.has_value());
            if (message) {
                expect_test_message(*message, sequence, mebibyte);
            }
        }
        EXPECT_FALSE((co_await channel.receive()).has_value());
    }());
    EXPECT_GE(memory.resource.statistics().get("stream.messages.spill.bytes")->total, (count - 4.0) * mebibyte);
    EXPECT_LE(memory.resource.peak_memory_used(memory::MemoryType::HOST), 4 * mebibyte);
}

TEST(StreamChannel, AReceiveWaitsForRoomToReadASpilledMessageBack) {
    StreamMemory memory(2 * mebibyte);
    RandomChooser chooser(3);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel channel(context);
    exec::sync_wait(executor, channel.send(test_message(memory.resource, 7, mebibyte)));
    ASSERT_EQ(spill_all(context), mebibyte);
    // HOST is full of memory nothing can spill.
    std::optional held = memory.resource.reserve(memory::MemoryType::HOST, 2 * mebibyte, memory::AllowOverbooking::no);
    std::optional<Message> received;
    exec::TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> exec::Task<void> { received = co_await channel.receive(); });
    while (executor.elapsed() < 100ms && executor.step()) {
    }
    EXPECT_FALSE(received.has_value());
    EXPECT_EQ(memory.resource.memory_waiting(), mebibyte);
    EXPECT_EQ(context.messages().bytes(memory::MemoryType::DISK), mebibyte);
    held.reset();
    group.wait();
    ASSERT_TRUE(received.has_value());
    expect_test_message(*received, 7, mebibyte);
    EXPECT_LE(memory.resource.peak_memory_used(memory::MemoryType::HOST), 2 * mebibyte);
}

TEST(StreamChannel, ClosingFailsSendsAndFreesTheirMessages) {
    StreamMemory memory;
    RandomChooser chooser(4);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel channel(context, ChannelLimits{.messages = 1});
    std::vector<bool> sent;
    exec::TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> exec::Task<void> {
        for (std::uint64_t sequence = 0; sequence < 3; ++sequence) {
            sent.push_back(co_await channel.send(test_message(memory.resource, sequence, 1000)));
        }
    });
    executor.run_until_idle();
    EXPECT_EQ(sent, (std::vector<bool>{true}));
    channel.close();
    group.wait();
    EXPECT_EQ(sent, (std::vector<bool>{true, false, false}));
    EXPECT_EQ(context.messages().size(), 1U);  // the one buffered, to be drained
    group.spawn([&](std::stop_token const&) -> exec::Task<void> {
        std::optional<Message> message = co_await channel.receive();
        EXPECT_TRUE(message.has_value());
        EXPECT_FALSE((co_await channel.receive()).has_value());
    });
    group.wait();
    EXPECT_EQ(context.messages().size(), 0U);
    EXPECT_EQ(memory.resource.memory_used(memory::MemoryType::HOST), 0U);
}

TEST(StreamChannel, DestroyingAChannelFreesTheMessagesItHoldsWhereverTheyAre) {
    StreamMemory memory;
    RandomChooser chooser(5);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    {
        Channel channel(context, ChannelLimits::unbounded());
        exec::sync_wait(executor, [&]() -> exec::Task<void> {
            for (std::uint64_t sequence = 0; sequence < 4; ++sequence) {
                co_await channel.send(test_message(memory.resource, sequence, 64 * kibibyte));
            }
        }());
        ASSERT_EQ(context.resource().spill_manager().spill(128 * kibibyte), 128 * kibibyte);
        EXPECT_EQ(context.messages().bytes(memory::MemoryType::DISK), 128 * kibibyte);
        EXPECT_EQ(context.messages().bytes(memory::MemoryType::HOST), 128 * kibibyte);
    }
    EXPECT_EQ(context.messages().size(), 0U);
    EXPECT_EQ(memory.resource.memory_used(memory::MemoryType::HOST), 0U);
    EXPECT_EQ(memory.resource.memory_used(memory::MemoryType::DISK), 0U);
    EXPECT_FALSE(memory.resource.statistics().get("stream.messages.unspill.bytes").has_value());
}

TEST(StreamChannel, AbortingTheContextEndsAReceiveWaitingForRoomToReadASpilledMessageBack) {
    StreamMemory memory(2 * mebibyte);
    memory::MemoryConfig const config = memory.resource.config();
    ASSERT_GE(config.reserve_timeout, 30s) << "so that only the abort can end the wait in time";
    RandomChooser chooser(4);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel channel(context);
    exec::sync_wait(executor, channel.send(test_message(memory.resource, 7, mebibyte)));
    ASSERT_EQ(spill_all(context), mebibyte);
    std::optional held = memory.resource.reserve(memory::MemoryType::HOST, 2 * mebibyte, memory::AllowOverbooking::no);
    exec::TaskGroup group(executor);
    group.spawn([&](std::stop_token const&) -> exec::Task<void> { co_await channel.receive(); });
    while (memory.resource.memory_waiting() == 0 && executor.step()) {
    }
    ASSERT_EQ(memory.resource.memory_waiting(), mebibyte) << "the receive waits for room";
    context.abort();
    EXPECT_THROW_WITH(group.wait(), PipelineAborted, "the pipeline was aborted");
    EXPECT_EQ(memory.resource.memory_waiting(), 0U);
}

TEST(StreamChannel, MovesParkedMessagesWithoutReadingThemBack) {
    StreamMemory memory;
    RandomChooser chooser(6);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel first(context, ChannelLimits::unbounded());
    Channel second(context, ChannelLimits::unbounded());
    exec::sync_wait(executor, [&]() -> exec::Task<void> {
        for (std::uint64_t sequence = 0; sequence < 3; ++sequence) {
            co_await first.send(test_message(memory.resource, sequence, 64 * kibibyte));
        }
        EXPECT_EQ(spill_all(context), 3 * 64 * kibibyte);
        while (first.size() > 0) {
            std::optional<ParkedMessage> parked = co_await first.receive_parked();
            EXPECT_TRUE(co_await second.send_parked(std::move(*parked)));
        }
        EXPECT_EQ(context.messages().bytes(memory::MemoryType::DISK), 3 * 64 * kibibyte);
        EXPECT_FALSE(memory.resource.statistics().get("stream.messages.unspill.bytes").has_value());
        for (std::uint64_t sequence = 0; sequence < 3; ++sequence) {
            std::optional<Message> message = co_await second.receive();
            EXPECT_TRUE(message.has_value());
            if (message) {
                expect_test_message(*message, sequence, 64 * kibibyte);
            }
        }
    }());
    EXPECT_EQ(memory.resource.statistics().get("stream.messages.unspill.bytes")->total, 3.0 * 64 * kibibyte);
}

TEST(StreamChannel, SendsAndReceivesGoOnWhileAWaitingMessageIsWrittenOut) {
    // The spill picks its victim under the store's lock and writes it
    // outside: a channel that waited for the write would never see the other
    // thread's messages, and the write hook would time out.
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    memory::BufferResource resource(faulty_config(root, operations));
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 1});
    Context context(pool, resource);
    Channel channel(context, ChannelLimits::unbounded());
    exec::sync_wait(pool, channel.send(test_message(resource, 0, 256 * kibibyte)));
    Event writing;
    Event others_done;
    operations->before_write([&] {
        writing.set();
        EXPECT_TRUE(others_done.wait()) << "a send or receive waited for the spill's I/O";
    });
    Watchdog watchdog("a spill writing while its channel is used");
    std::thread spiller([&] { EXPECT_EQ(spill_all(context), 256 * kibibyte); });
    ASSERT_TRUE(writing.wait());
    exec::sync_wait(pool, [&]() -> exec::Task<void> {
        EXPECT_TRUE(co_await channel.send(test_message(resource, 1, kibibyte)));
        std::optional<ParkedMessage> victim = co_await channel.receive_parked();
        EXPECT_TRUE(victim.has_value());
        std::optional<Message> other = co_await channel.receive();
        EXPECT_TRUE(other.has_value());
        if (other) {
            expect_test_message(*other, 1, kibibyte);
        }
        EXPECT_TRUE(co_await channel.send_parked(std::move(*victim)));
    }());
    others_done.set();
    spiller.join();
    operations->before_write({});
    std::optional<Message> victim = exec::sync_wait(pool, channel.receive());
    ASSERT_TRUE(victim.has_value());
    expect_test_message(*victim, 0, 256 * kibibyte);
}

TEST(StreamChannel, RejectsLimitsOfZeroAndMessagesOfAnotherResource) {
    StreamMemory memory;
    StreamMemory other;
    RandomChooser chooser(7);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    EXPECT_THROW_WITH(Channel(context, ChannelLimits{.messages = 0}), InvalidArgument, "capacity of at least 1");
    EXPECT_THROW_WITH(
        Channel(context, ChannelLimits{.messages = 1, .bytes = 0}), InvalidArgument, "weight bound of at least 1"
    );
    Channel channel(context);
    EXPECT_THROW_WITH(
        exec::sync_wait(executor, channel.send(test_message(other.resource, 0, 10))), InvalidArgument,
        "of the store's resource"
    );
    EXPECT_EQ(other.resource.memory_used(memory::MemoryType::HOST), 0U);
}
