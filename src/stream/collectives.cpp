#include <spillway/stream/collectives.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include <spillway/memory/host_allocator.hpp>
#include <spillway/stream/reserve_memory.hpp>
#include <spillway/stream/table_message.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table/packed_split.hpp>
#include <spillway/table_shuffle/packed_partitions.hpp>

#include "stream/poll_backoff.hpp"

namespace spillway::stream {
namespace {

/// The key columns of a table of schema `schema`.
using KeyColumns = std::function<std::vector<std::size_t>(table::Schema const& schema)>;

/// The actor of `shuffle_tables` and `shuffle_tables_by_name`.
Actor shuffle_tables_by(shuffle::Shuffler& shuffler, KeyColumns key_columns_of, Channel& input, Channel& output) {
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
        auto const partition_of_row = table::partition_rows(*table, key_columns_of(table->schema()), partitions);
        table::PackedSplit const split(*table, partition_of_row, partitions);
        // The pieces' memory is waited for without holding a thread.
        auto reservation = co_await reserve_memory(resource, context.executor(), table_shuffle::packed_pieces_size(split));
        shuffler.insert(table_shuffle::pack_pieces(split, resource, reservation));
    }
    shuffler.insert_finished();
    detail::PollBackoff backoff(context.executor());
    while (true) {
        auto const polled = shuffler.poll_any();
        if (polled.done) {
            co_return;
        }
        if (!polled.partition) {
            co_await backoff.pause();
            continue;
        }
        backoff.reset();
        while (std::optional<shuffle::PackedData> chunk = shuffler.extract_chunk(*polled.partition)) {
            Message message{.sequence = *polled.partition, .payload = std::move(*chunk)};
            if (!co_await output.send(std::move(message))) {
                co_return;
            }
        }
    }
}

}  // namespace

Actor shuffle_tables(
    shuffle::Shuffler& shuffler, std::vector<std::size_t> key_columns, Channel& input, Channel& output
) {
    return shuffle_tables_by(
        shuffler, [key_columns = std::move(key_columns)](table::Schema const&) { return key_columns; }, input, output
    );
}

Actor shuffle_tables_by_name(
    shuffle::Shuffler& shuffler, std::vector<std::string> key_names, Channel& input, Channel& output
) {
    return shuffle_tables_by(
        shuffler,
        [key_names = std::move(key_names)](table::Schema const& schema) {
            std::vector<std::size_t> columns;
            for (auto const& name : key_names) {
                columns.push_back(schema.index_of(name));
            }
            return columns;
        },
        input, output
    );
}

Actor all_gather(shuffle::AllGather& gather, Channel& input, Channel& output) {
    CloseAtExit closer{&input, &output};
    while (std::optional<Message> message = co_await input.receive()) {
        gather.insert(message->sequence, std::move(message->payload));
    }
    gather.insert_finished();
    detail::PollBackoff backoff(input.context().executor());
    while (!gather.poll()) {
        co_await backoff.pause();
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
