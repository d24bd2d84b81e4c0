#include <spillway/query/actors.hpp>

#include <map>
#include <set>
#include <optional>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/memory/host_allocator.hpp>
#include <spillway/stream/table_message.hpp>

namespace spillway::query {
namespace {

using stream::Channel;
using stream::CloseAtExit;
using stream::Message;
using stream::ParkedMessage;

/// Every message of `input` until it ends, parked (spillable).
exec::Task<std::vector<ParkedMessage>> receive_all_parked(Channel& input) {
    std::vector<ParkedMessage> all;
    while (std::optional<ParkedMessage> parked = co_await input.receive_parked()) {
        all.push_back(std::move(*parked));
    }
    co_return all;
}

/// The concatenated tables of `parked`, read back from their stores
/// (waiting for memory, until `context` is aborted) and unpacked into the
/// context's resource.
exec::Task<table::Table> unpark_tables(stream::Context& context, std::vector<ParkedMessage> parked) {
    std::vector<table::Table> tables;
    tables.reserve(parked.size());
    for (auto& one : parked) {
        auto* const store = one.store();
        Message message = co_await store->unpark(std::move(one), context.abort_token());
        // No co_await inside: a scope ends on the thread that began it.
        memory::ScopedHostResource const scope(&context.resource());
        tables.push_back(stream::unpack_table(message));
    }
    parked.clear();
    if (tables.size() == 1) {
        co_return std::move(tables.front());
    }
    memory::ScopedHostResource const scope(&context.resource());
    co_return table::Table::concatenate(tables);
}

/// A message numbered `sequence` of the concatenated tables of `parked`.
exec::Task<Message> pack_concatenated(
    stream::Context& context, std::vector<ParkedMessage> parked, std::uint64_t sequence
) {
    table::Table const joined = co_await unpark_tables(context, std::move(parked));
    co_return co_await stream::pack_table(context, sequence, joined);
}

/// Applies `function` to the tables of `parked` and sends the result
/// numbered `sequence`; false if `output` is closed.
exec::Task<bool> apply_and_send(
    Channel& output, stream::TableFunction const& function, std::vector<ParkedMessage> parked, std::uint64_t sequence
) {
    auto& context = output.context();
    table::Table const input = co_await unpark_tables(context, std::move(parked));
    std::optional<table::Table> result;
    {
        memory::ScopedHostResource const scope(&context.resource());
        result = function(input);
    }
    Message message = co_await stream::pack_table(context, sequence, *result);
    result.reset();
    co_return co_await output.send(std::move(message));
}

/// Probes `hash_table` with the table of `message` and sends the result
/// under the message's number; false if `output` is closed. A null
/// `hash_table` is a build side without rows: an anti join passes the
/// probe's rows through, the others send nothing.
exec::Task<bool> probe_and_send(
    Channel& output, JoinHashTable const* hash_table, JoinSpec const& spec, Message message
) {
    auto& context = output.context();
    std::optional<table::Table> result;
    {
        memory::ScopedHostResource const scope(&context.resource());
        auto probe = stream::unpack_table(message);
        if (hash_table != nullptr) {
            result = hash_table->probe(probe, spec.probe_keys, spec.kind);
        } else if (spec.kind == JoinKind::anti) {
            result = std::move(probe);
        }
    }
    if (!result) {
        co_return true;
    }
    auto const sequence = message.sequence;
    {
        Message const consumed = std::move(message);  // frees its buffer before the packed copy is made
    }
    Message packed = co_await stream::pack_table(context, sequence, *result);
    result.reset();
    co_return co_await output.send(std::move(packed));
}

/// A hash table over the tables of `parked`; null if there are none.
exec::Task<std::unique_ptr<JoinHashTable>> build_hash_table(
    stream::Context& context, std::vector<ParkedMessage> parked, JoinSpec const& spec
) {
    if (parked.empty()) {
        co_return nullptr;
    }
    table::Table build = co_await unpark_tables(context, std::move(parked));
    memory::ScopedHostResource const scope(&context.resource());
    co_return std::make_unique<JoinHashTable>(std::move(build), spec.build_keys);
}

/// The actor of `send_tables`, its arguments checked.
stream::Actor send_tables_actor(
    Channel& output, std::size_t count, TableMaker make, std::size_t first, std::size_t step
) {
    CloseAtExit closer{&output};
    auto& context = output.context();
    for (auto index = first; index < count; index = step < count - index ? index + step : count) {
        std::optional<table::Table> table;
        {
            memory::ScopedHostResource const scope(&context.resource());
            table = make(index);
        }
        Message message = co_await stream::pack_table(context, index, *table);
        table.reset();
        if (!co_await output.send(std::move(message))) {
            co_return;
        }
    }
}

/// The actor of `apply_per_partition`, its function checked.
stream::Actor apply_per_partition_actor(Channel& input, Channel& output, stream::TableFunction function) {
    CloseAtExit closer{&input, &output};
    std::vector<ParkedMessage> partition;
    while (std::optional<ParkedMessage> parked = co_await input.receive_parked()) {
        if (!partition.empty() && parked->sequence() != partition.front().sequence()) {
            auto const sequence = partition.front().sequence();
            std::vector<ParkedMessage> whole = std::move(partition);
            partition.clear();
            if (!co_await apply_and_send(output, function, std::move(whole), sequence)) {
                co_return;
            }
        }
        partition.push_back(std::move(*parked));
    }
    if (!partition.empty()) {
        auto const sequence = partition.front().sequence();
        co_await apply_and_send(output, function, std::move(partition), sequence);
    }
}

/// The actor of `coalesce_tables`, its size checked.
stream::Actor coalesce_tables_actor(Channel& input, Channel& output, std::size_t min_bytes) {
    CloseAtExit closer{&input, &output};
    auto& context = output.context();
    std::vector<ParkedMessage> gathered;
    std::size_t bytes = 0;
    auto const send_gathered = [&]() -> exec::Task<bool> {
        auto const sequence = gathered.front().sequence();
        if (gathered.size() == 1) {
            co_return co_await output.send_parked(std::move(gathered.front()));
        }
        Message message = co_await pack_concatenated(context, std::move(gathered), sequence);
        co_return co_await output.send(std::move(message));
    };
    while (std::optional<ParkedMessage> parked = co_await input.receive_parked()) {
        bytes += parked->bytes();
        gathered.push_back(std::move(*parked));
        if (bytes >= min_bytes) {
            bool const sent = co_await send_gathered();
            gathered.clear();
            bytes = 0;
            if (!sent) {
                co_return;
            }
        }
    }
    if (!gathered.empty()) {
        co_await send_gathered();
    }
}

/// The actor of `apply_to_all`, its function checked.
stream::Actor apply_to_all_actor(Channel& input, Channel& output, stream::TableFunction function) {
    CloseAtExit closer{&input, &output};
    std::vector<ParkedMessage> all = co_await receive_all_parked(input);
    if (!all.empty()) {
        co_await apply_and_send(output, function, std::move(all), 0);
    }
}

}  // namespace

stream::Actor send_tables(Channel& output, std::size_t count, TableMaker make, std::size_t first, std::size_t step) {
    SPILLWAY_EXPECTS(step > 0, "send_tables needs a step of at least 1", InvalidArgument);
    SPILLWAY_EXPECTS(static_cast<bool>(make), "send_tables needs a function that makes the tables", InvalidArgument);
    return send_tables_actor(output, count, std::move(make), first, step);
}

stream::Actor coalesce_tables(Channel& input, Channel& output, std::size_t min_bytes) {
    SPILLWAY_EXPECTS(min_bytes > 0, "coalesce_tables needs a size of at least 1 byte", InvalidArgument);
    return coalesce_tables_actor(input, output, min_bytes);
}

stream::Actor apply_per_partition(Channel& input, Channel& output, stream::TableFunction function) {
    SPILLWAY_EXPECTS(static_cast<bool>(function), "apply_per_partition needs a function", InvalidArgument);
    return apply_per_partition_actor(input, output, std::move(function));
}

stream::Actor apply_to_all(Channel& input, Channel& output, stream::TableFunction function) {
    SPILLWAY_EXPECTS(static_cast<bool>(function), "apply_to_all needs a function", InvalidArgument);
    return apply_to_all_actor(input, output, std::move(function));
}

stream::Actor broadcast_join(Channel& build, Channel& probe, Channel& output, JoinSpec spec) {
    CloseAtExit closer{&build, &probe, &output};
    auto& context = output.context();
    std::vector<ParkedMessage> build_side = co_await receive_all_parked(build);
    auto const hash_table = co_await build_hash_table(context, std::move(build_side), spec);
    while (std::optional<Message> message = co_await probe.receive()) {
        if (!co_await probe_and_send(output, hash_table.get(), spec, std::move(*message))) {
            co_return;
        }
    }
}

stream::Actor partitioned_join(Channel& build, Channel& probe, Channel& output, JoinSpec spec) {
    CloseAtExit closer{&build, &probe, &output};
    auto& context = output.context();
    std::map<std::uint64_t, std::vector<ParkedMessage>> build_partitions;
    while (std::optional<ParkedMessage> parked = co_await build.receive_parked()) {
        build_partitions[parked->sequence()].push_back(std::move(*parked));
    }
    std::optional<std::uint64_t> partition;
    std::set<std::uint64_t> joined;  // partitions done, whose build side is gone
    std::unique_ptr<JoinHashTable> hash_table;
    while (std::optional<Message> message = co_await probe.receive()) {
        if (partition != message->sequence) {
            SPILLWAY_EXPECTS(joined.insert(message->sequence).second,
                             "partitioned_join: the probe side's partition "
                                 << message->sequence
                                 << " came again after another; each partition's tables must come together",
                             InvalidArgument);
            partition = message->sequence;
            hash_table.reset();
            std::vector<ParkedMessage> parked;
            if (auto const found = build_partitions.find(*partition); found != build_partitions.end()) {
                parked = std::move(found->second);
                build_partitions.erase(found);
            }
            hash_table = co_await build_hash_table(context, std::move(parked), spec);
        }
        if (!co_await probe_and_send(output, hash_table.get(), spec, std::move(*message))) {
            co_return;
        }
    }
}

stream::Actor collect_table(Channel& input, table::Table& result) {
    CloseAtExit closer{&input};
    std::vector<ParkedMessage> all = co_await receive_all_parked(input);
    result = co_await unpark_tables(input.context(), std::move(all));
}

}  // namespace spillway::query
