#include <spillway/stream/collectives.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

#include <spillway/memory/host_allocator.hpp>
#include <spillway/stream/reserve_memory.hpp>
#include <spillway/stream/table_message.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table/packed_split.hpp>
#include <spillway/table_shuffle/packed_partitions.hpp>

namespace spillway::stream {
namespace {

/// The pause after a poll that found nothing, and the longest: short enough
/// that a partition goes out soon after it completes, long enough that an
/// idle actor costs next to nothing.
constexpr std::chrono::microseconds first_pause{50};
constexpr std::chrono::microseconds longest_pause{2000};

/// Sleeps on `executor` after a poll that found nothing: `pause`, which then
/// doubles up to `longest_pause`.
exec::Task<void> pause_after_empty_poll(exec::Executor& executor, std::chrono::microseconds& pause) {
    co_await executor.sleep_for(pause);
    pause = std::min(pause * 2, longest_pause);
}

}  // namespace

Actor shuffle_tables(
    shuffle::Shuffler& shuffler, std::vector<std::size_t> key_columns, Channel& input, Channel& output
) {
    CloseAtExit closer{&input, &output};
    Context& context = input.context();
    memory::BufferResource& resource = context.resource();
    std::size_t const partitions = shuffler.total_partitions();
    while (std::optional<Message> message = co_await input.receive()) {
        std::optional<table::Table> table;
        {
            // No co_await inside: a scope ends on the thread that began it.
            memory::ScopedHostResource const scope(&resource);
            table = unpack_table(*message);
        }
        message.reset();
        auto const partition_of_row = table::partition_rows(*table, key_columns, partitions);
        table::PackedSplit const split(*table, partition_of_row, partitions);
        // The pieces' memory is waited for without holding a thread.
        auto reservation = co_await reserve_memory(resource, context.executor(), table_shuffle::packed_pieces_size(split));
        shuffler.insert(table_shuffle::pack_pieces(split, resource, reservation));
    }
    shuffler.insert_finished();
    auto pause = first_pause;
    while (true) {
        auto const polled = shuffler.poll_any();
        if (polled.done) {
            co_return;
        }
        if (!polled.partition) {
            co_await pause_after_empty_poll(context.executor(), pause);
            continue;
        }
        pause = first_pause;
        while (std::optional<shuffle::PackedData> chunk = shuffler.extract_chunk(*polled.partition)) {
            Message message{.sequence = *polled.partition, .payload = std::move(*chunk)};
            if (!co_await output.send(std::move(message))) {
                co_return;
            }
        }
    }
}

Actor all_gather(shuffle::AllGather& gather, Channel& input, Channel& output) {
    CloseAtExit closer{&input, &output};
    while (std::optional<Message> message = co_await input.receive()) {
        gather.insert(message->sequence, std::move(message->payload));
    }
    gather.insert_finished();
    auto pause = first_pause;
    while (!gather.poll()) {
        co_await pause_after_empty_poll(input.context().executor(), pause);
    }
    for (std::uint64_t sequence = 0;; ++sequence) {
        std::optional<shuffle::PackedData> chunk = gather.extract_chunk();
        if (!chunk) {
            co_return;
        }
        Message message{.sequence = sequence, .payload = std::move(*chunk)};
        if (!co_await output.send(std::move(message))) {
            co_return;
        }
    }
}

}  // namespace spillway::stream
