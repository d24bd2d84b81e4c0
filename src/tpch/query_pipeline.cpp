#include "tpch/query_pipeline.hpp"

#include <algorithm>
#include <memory>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/stream/collectives.hpp>
#include <spillway/stream/lineariser.hpp>

namespace spillway::tpch::detail {
namespace {

/// The least bytes of a table a shuffle into `partitions` splits: 128 KiB a
/// partition, or a 32nd of the HOST limit where that is less, so that what
/// a shuffle gathers stays a small share of memory. Pieces of 64 KiB or more
/// are mapped blocks, whose memory goes back to the system or to the pool
/// when freed; smaller ones come from the C library, whose heap keeps what
/// is freed (what that cost Q21 at scale 10: docs/architecture.md).
std::size_t min_shuffled_bytes(memory::BufferResource const& resource, shuffle::PartitionId partitions) {
    constexpr std::uint64_t per_partition = std::uint64_t{128} << 10;
    auto const share = resource.memory_limit(memory::MemoryType::HOST) / 32;
    return static_cast<std::size_t>(std::clamp<std::uint64_t>(share, 4096, std::uint64_t{partitions} * per_partition));
}

}  // namespace

QueryPipeline::QueryPipeline(comm::Communicator& communicator, exec::Executor& executor, TableSource const& source,
                             QueryConfig const& config, shuffle::OpId first_op_id)
    : communicator_(communicator),
      source_(source),
      config_(config),
      next_op_id_(first_op_id),
      context_(executor, communicator.buffer_resource()) {}

stream::Channel& QueryPipeline::channel(stream::ChannelLimits limits) {
    return channels_.emplace_back(context_, limits);
}

shuffle::OpId QueryPipeline::next_op_id() { return next_op_id_++; }

stream::Channel& QueryPipeline::scan(table::TpchTable table, std::vector<std::string> columns,
                                     stream::TableFunction function) {
    // Each worker reads its chunks and filters them at once, so that only
    // what passes is packed; a linearise puts the workers' results in order.
    auto const rank = static_cast<std::size_t>(communicator_.rank());
    auto const ranks = static_cast<std::size_t>(communicator_.nranks());
    auto const shared_function = std::make_shared<stream::TableFunction const>(std::move(function));
    auto const shared_columns = std::make_shared<std::vector<std::string> const>(std::move(columns));
    std::vector<stream::Channel*> parts;
    for (std::size_t worker = 0; worker < config_.workers; ++worker) {
        auto& part = channel(stream::ChannelLimits{.messages = 2});
        parts.push_back(&part);
        actors_.push_back(query::send_tables(
            part, source_.num_chunks(table),
            [&source = source_, table, shared_function, shared_columns](std::size_t chunk) {
                return (*shared_function)(source.chunk(table, chunk, *shared_columns));
            },
            rank + worker * ranks, ranks * config_.workers
        ));
    }
    auto& output = channel();
    actors_.push_back(stream::linearise(std::move(parts), output));
    return output;
}

stream::Channel& QueryPipeline::gather(stream::Channel& input) {
    auto& gathered = channel();
    auto& all_gather =
        gathers_.emplace_back(communicator_, next_op_id(), communicator_.buffer_resource(), config_.shuffle);
    actors_.push_back(stream::all_gather(all_gather, input, gathered));
    return gathered;
}

stream::Channel& QueryPipeline::shuffle(stream::Channel& input, std::vector<std::string> keys) {
    // Small tables (a join's output, a selective scan's) are split together,
    // so that no partition's piece of one is a handful of rows.
    auto& shuffled = channel();
    auto& shuffler = shufflers_.emplace_back(communicator_, next_op_id(), config_.partitions,
                                             communicator_.buffer_resource(), shuffle::PartitionOwner::round_robin,
                                             config_.shuffle);
    actors_.push_back(stream::shuffle_tables_by_name(
        shuffler, std::move(keys), input, shuffled,
        min_shuffled_bytes(communicator_.buffer_resource(), config_.partitions)
    ));
    return shuffled;
}

stream::Channel& QueryPipeline::per_partition(stream::Channel& input, stream::TableFunction function) {
    auto& output = channel();
    actors_.push_back(query::apply_per_partition(input, output, std::move(function)));
    return output;
}

stream::Channel& QueryPipeline::all(stream::Channel& input, stream::TableFunction function) {
    auto& output = channel();
    actors_.push_back(query::apply_to_all(input, output, std::move(function)));
    return output;
}

stream::Channel& QueryPipeline::broadcast_join(stream::Channel& build, stream::Channel& probe, query::JoinSpec spec) {
    auto& output = channel();
    actors_.push_back(query::broadcast_join(gather(build), probe, output, std::move(spec)));
    return output;
}

stream::Channel& QueryPipeline::partitioned_join(stream::Channel& build, stream::Channel& probe,
                                                 query::JoinSpec spec) {
    auto& build_partitions = shuffle(build, spec.build_keys);
    auto& probe_partitions = shuffle(probe, spec.probe_keys);
    auto& output = channel();
    actors_.push_back(query::partitioned_join(build_partitions, probe_partitions, output, std::move(spec)));
    return output;
}

table::Table QueryPipeline::run(stream::Channel& output) {
    table::Table result;
    actors_.push_back(query::collect_table(output, result));
    stream::run_actors(context_, std::move(actors_));
    return result;
}

}  // namespace spillway::tpch::detail
