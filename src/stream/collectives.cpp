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

#include "stream/aborted.hpp"
#include "stream/poll_backoff.hpp"

namespace spillway::stream {
namespace {

/// @throws PipelineAborted if `context` is aborted: a collective whose
/// other ranks go on (heartbeats keep it from timing out) would otherwise
/// be polled for ever by an actor whose own pipeline has failed.
void end_if_aborted(Context const& context) {
    if (context.aborted()) {
        detail::fail_aborted();
    }
}

/// The key columns of a table of schema `schema`.
using KeyColumns = std::function<std::vector<std::size_t>(table::Schema const& schema)>;

/// Splits the rows of `table` by the hash of `key_columns` and inserts the
/// pieces into `shuffler`; their memory is waited for without holding a thread.
exec::Task<void> split_and_insert(
    shuffle::Shuffler& shuffler, Context& context, table::Table const& table, std::vector<std::size_t> const& key_columns
) {
    auto const partition_of_row = table::partition_rows(table, key_columns, shuffler.total_partitions());
    table::PackedSplit const split(table, partition_of_row, shuffler.total_partitions());
    auto reservation =
        co_await reserve_memory(context.resource(), context.executor(), table_shuffle::packed_pieces_size(split),
                                context.abort_token());
    shuffler.insert(table_shuffle::pack_pieces(split, context.resource(), reservation));
}

/// The actor of `shuffle_tables` and `shuffle_tables_by_name`.
Actor shuffle_tables_by(
    shuffle::Shuffler& shuffler, KeyColumns key_columns_of, Channel& input, Channel& output,
    std::size_t min_split_bytes
) {
    CloseAtExit closer{&input, &output};
    Context& context = input.context();
    memory::BufferResource& resource = context.resource();
    // Tables smaller than `min_split_bytes` wait, unpacked, for more.
    std::vector<table::Table> gathered;
    std::size_t gathered_bytes = 0;
    for (bool more = true; more;) {
        std::optional<Message> message = co_await input.receive();
        more = message.has_value();
        std::optional<table::Table> table;
        {
            // No co_await inside: a scope ends on the thread that began it.
            memory::ScopedHostResource const scope(&resource);
            if (message) {
                gathered.push_back(unpack_table(*message));
                gathered_bytes += gathered.back().byte_size();
                message.reset();
            }
            if (!gathered.empty() && (gathered_bytes >= min_split_bytes || !more)) {
                table = gathered.size() == 1 ? std::move(gathered.front()) : table::Table::concatenate(gathered);
                gathered.clear();
                gathered_bytes = 0;
            }
        }
        if (table) {
            co_await split_and_insert(shuffler, context, *table, key_columns_of(table->schema()));
        }
    }
    shuffler.insert_finished();
    detail::PollBackoff backoff(context.executor());
    while (true) {
        end_if_aborted(context);
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
    shuffle::Shuffler& shuffler, std::vector<std::size_t> key_columns, Channel& input, Channel& output,
    std::size_t min_split_bytes
) {
    return shuffle_tables_by(
        shuffler, [key_columns = std::move(key_columns)](table::Schema const&) { return key_columns; }, input, output,
        min_split_bytes
    );
}

Actor shuffle_tables_by_name(
    shuffle::Shuffler& shuffler, std::vector<std::string> key_names, Channel& input, Channel& output,
    std::size_t min_split_bytes
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
        input, output, min_split_bytes
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
        end_if_aborted(input.context());
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
