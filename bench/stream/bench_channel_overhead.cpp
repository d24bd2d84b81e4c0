// What a stream::Channel costs. First, 8,000 messages of 64 KiB (500 MiB)
// from a producer to a consumer on 2 threads, once through an exec::Channel
// of PackedData and once through a stream::Channel, which parks every
// message in the pipeline's spillable store (an insert and an extract under
// the store's lock, and a parked message's bookkeeping). Then the messages
// pile up: all are sent into an unbounded stream channel before any is
// received, once with room for all of them and once under a HOST limit of a
// tenth of them, so that most are written to disk and read back.

#include <spillway/exec/channel.hpp>
#include <spillway/exec/sync_wait.hpp>
#include <spillway/exec/task_group.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/stream/actor.hpp>
#include <spillway/stream/channel.hpp>
#include <spillway/stream/context.hpp>
#include <spillway/stream/reserve_memory.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "../exec/bench_support.hpp"

using namespace spillway;

namespace {

constexpr std::size_t messages = 8'000;
constexpr std::size_t message_bytes = 64 << 10;
constexpr int rounds = 3;

/// A HOST buffer of `message_bytes`, every byte `index`, reserved by
/// waiting for room.
exec::Task<memory::Buffer> make_payload(memory::BufferResource& resource, exec::Executor& executor, std::size_t index) {
    auto reservation = co_await stream::reserve_memory(resource, executor, message_bytes);
    auto buffer = resource.make_buffer(message_bytes, reservation);
    std::ranges::fill(buffer.data(), static_cast<std::byte>(index));
    co_return buffer;
}

void fail(char const* what) {
    std::fprintf(stderr, "%s\n", what);
    std::exit(1);
}

/// Sends the messages to `output`, then closes it.
stream::Actor produce(memory::BufferResource& resource, exec::ThreadPool& pool, stream::Channel& output) {
    stream::CloseAtExit closer{&output};
    for (std::size_t index = 0; index < messages; ++index) {
        memory::Buffer payload = co_await make_payload(resource, pool, index);
        stream::Message message{
            .sequence = index, .payload = shuffle::PackedData{.metadata = {}, .data = std::move(payload)}
        };
        co_await output.send(std::move(message));
    }
}

/// Receives every message of `input`, checking the order.
stream::Actor consume(stream::Channel& input) {
    stream::CloseAtExit closer{&input};
    std::size_t index = 0;
    while (std::optional<stream::Message> message = co_await input.receive()) {
        if (message->payload.data.data()[message_bytes - 1] != static_cast<std::byte>(index++)) {
            fail("stream channel: messages out of order");
        }
    }
}

/// Producer and consumer over an exec::Channel of PackedData.
void through_exec_channel(memory::BufferResource& resource, exec::ThreadPool& pool) {
    exec::Channel<shuffle::PackedData> channel(pool, 8);
    exec::TaskGroup group(pool);
    group.spawn([&](std::stop_token const&) -> exec::Task<void> {
        for (std::size_t index = 0; index < messages; ++index) {
            memory::Buffer payload = co_await make_payload(resource, pool, index);
            shuffle::PackedData data{.metadata = {}, .data = std::move(payload)};
            co_await channel.send(std::move(data));
        }
        channel.close();
    });
    group.spawn([&](std::stop_token const&) -> exec::Task<void> {
        std::size_t index = 0;
        while (std::optional<shuffle::PackedData> data = co_await channel.receive()) {
            if (data->data.data()[message_bytes - 1] != static_cast<std::byte>(index++)) {
                fail("exec channel: messages out of order");
            }
        }
    });
    group.wait();
}

/// Producer and consumer over a stream::Channel of at most 8 messages.
void through_stream_channel(memory::BufferResource& resource, exec::ThreadPool& pool) {
    stream::Context context(pool, resource);
    stream::Channel channel(context, stream::ChannelLimits{.messages = 8});
    std::vector<stream::Actor> actors;
    actors.push_back(produce(resource, pool, channel));
    actors.push_back(consume(channel));
    stream::run_actors(context, std::move(actors));
}

/// Every message sent into an unbounded stream::Channel, then every one
/// received.
void piled_up(memory::BufferResource& resource, exec::ThreadPool& pool) {
    stream::Context context(pool, resource);
    stream::Channel channel(context, stream::ChannelLimits::unbounded());
    exec::sync_wait(pool, produce(resource, pool, channel));
    exec::sync_wait(pool, consume(channel));
}

memory::MemoryConfig config(std::uint64_t host_limit) {
    memory::MemoryConfig result;
    result.host_limit = SizeSpec::bytes(host_limit);
    return result;
}

}  // namespace

int main() {
    exec::ThreadPool pool(exec::ThreadPool::Config{2});
    memory::BufferResource roomy(config(4ULL << 30));
    memory::BufferResource tight(config(messages * message_bytes / 10));
    auto const seconds = bench::fastest_interleaved(
        rounds, {[&] { through_stream_channel(roomy, pool); }, [&] { through_exec_channel(roomy, pool); },
                 [&] { piled_up(roomy, pool); }, [&] { piled_up(tight, pool); }}
    );
    double const gib = static_cast<double>(messages * message_bytes) / (1ULL << 30);
    auto const spilled = tight.statistics().get("stream.messages.spill.bytes");
    std::printf("%zu messages of %zu KiB on 2 threads\n", messages, message_bytes >> 10);
    std::printf("streamed through exec::Channel:     %.3f s (%.2f GiB/s)\n", seconds[1], gib / seconds[1]);
    std::printf("streamed through stream::Channel:   %.3f s (%.2f GiB/s)\n", seconds[0], gib / seconds[0]);
    std::printf("piled up, all in memory:            %.3f s (%.2f GiB/s)\n", seconds[2], gib / seconds[2]);
    std::printf("piled up, a tenth in memory:        %.3f s (%.2f GiB/s), %.2f GiB spilled a round\n", seconds[3],
                gib / seconds[3], spilled ? spilled->total / rounds / (1ULL << 30) : 0.0);
    bench::metric("stream_channel_vs_exec_channel", seconds[1] / seconds[0], "ratio");
    bench::metric("stream_spilled_vs_in_memory", seconds[2] / seconds[3], "ratio");
    return 0;
}
