#include "tpch/query_pipeline.hpp"

#include <algorithm>
#include <memory>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/stream/collectives.hpp>
#include <spillway/stream/fanout.hpp>
#include <spillway/stream/routing.hpp>
#include <spillway/table/table_builder.hpp>

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

Flow& QueryPipeline::flow(std::size_t lanes, stream::ChannelLimits limits) {
    auto& made = flows_.emplace_back();
    for (std::size_t lane = 0; lane < lanes; ++lane) {
        made.lanes.push_back(&channel(limits));
    }
    return made;
}

stream::Channel& QueryPipeline::merged(Flow& input) {
    if (input.lanes.size() == 1) {
        return *input.lanes.front();
    }
    auto& output = channel();
    for (auto& actor : stream::merge(input.lanes, output)) {
        actors_.push_back(std::move(actor));
    }
    return output;
}

shuffle::OpId QueryPipeline::next_op_id() { return next_op_id_++; }

Flow& QueryPipeline::scan(table::TpchTable table, std::vector<std::string> columns, stream::TableFunction function) {
    // Each worker reads its chunks and filters them at once, so that only
    // what passes is packed.
    auto const rank = static_cast<std::size_t>(communicator_.rank());
    auto const ranks = static_cast<std::size_t>(communicator_.nranks());
    auto const shared_function = std::make_shared<stream::TableFunction const>(std::move(function));
    auto const shared_columns = std::make_shared<std::vector<std::string> const>(std::move(columns));
    auto& output = flows_.emplace_back();
    for (std::size_t worker = 0; worker < config_.workers; ++worker) {
        auto& lane = channel(stream::ChannelLimits{.messages = 2});
        output.lanes.push_back(&lane);
        actors_.push_back(query::send_tables(
            lane, source_.num_chunks(table),
            [&source = source_, table, shared_function, shared_columns](std::size_t chunk) {
                return (*shared_function)(source.chunk(table, chunk, *shared_columns));
            },
            rank + worker * ranks, ranks * config_.workers
        ));
    }
    return output;
}

Flow& QueryPipeline::gather(Flow& input) {
    auto& gathered = flow(1);
    auto& all_gather =
        gathers_.emplace_back(communicator_, next_op_id(), communicator_.buffer_resource(), config_.shuffle);
    actors_.push_back(stream::all_gather(all_gather, merged(input), *gathered.lanes.front()));
    return gathered;
}

Flow& QueryPipeline::shuffle(Flow& input, std::vector<std::string> keys) {
    // Small tables (a join's output, a selective scan's) are split together,
    // so that no partition's piece of one is a handful of rows.
    auto& shuffled = channel();
    auto& shuffler = shufflers_.emplace_back(communicator_, next_op_id(), config_.partitions,
                                             communicator_.buffer_resource(), shuffle::PartitionOwner::round_robin,
                                             config_.shuffle);
    actors_.push_back(stream::shuffle_tables_by_name(
        shuffler, std::move(keys), merged(input), shuffled,
        min_shuffled_bytes(communicator_.buffer_resource(), config_.partitions)
    ));
    // A partition's chunks come together: lanes that took only a few at a
    // time would take turns rather than work side by side. Waiting chunks
    // are spillable, as they were in the shuffler.
    auto& output = flow(config_.workers, stream::ChannelLimits::unbounded());
    actors_.push_back(stream::route_by_sequence(shuffled, output.lanes));
    return output;
}

Flow& QueryPipeline::per_partition(Flow& input, stream::TableFunction function) {
    auto& output = flow(input.lanes.size());
    for (std::size_t lane = 0; lane < input.lanes.size(); ++lane) {
        actors_.push_back(query::apply_per_partition(*input.lanes[lane], *output.lanes[lane], function));
    }
    return output;
}

Flow& QueryPipeline::all(Flow& input, stream::TableFunction function) {
    auto& output = flow(1);
    actors_.push_back(query::apply_to_all(merged(input), *output.lanes.front(), std::move(function)));
    return output;
}

Flow& QueryPipeline::broadcast_join(Flow& build, Flow& probe, query::JoinSpec spec) {
    auto& gathered = gather(build);
    auto& builds = probe.lanes.size() == 1 ? gathered : flow(probe.lanes.size());
    if (&builds != &gathered) {
        for (auto& actor : stream::fanout(*gathered.lanes.front(), builds.lanes, stream::FanoutPolicy::bounded)) {
            actors_.push_back(std::move(actor));
        }
    }
    auto& output = flow(probe.lanes.size());
    for (std::size_t lane = 0; lane < probe.lanes.size(); ++lane) {
        actors_.push_back(query::broadcast_join(*builds.lanes[lane], *probe.lanes[lane], *output.lanes[lane], spec));
    }
    return output;
}

Flow& QueryPipeline::partitioned_join(Flow& build, Flow& probe, query::JoinSpec spec) {
    auto& build_partitions = shuffle(build, spec.build_keys);
    auto& probe_partitions = shuffle(probe, spec.probe_keys);
    auto& output = flow(config_.workers);
    for (std::size_t lane = 0; lane < config_.workers; ++lane) {
        actors_.push_back(query::partitioned_join(*build_partitions.lanes[lane], *probe_partitions.lanes[lane],
                                                  *output.lanes[lane], spec));
    }
    return output;
}

table::Table QueryPipeline::run(Flow& output, table::Schema answer) {
    table::Table result;
    actors_.push_back(query::collect_table(merged(output), result));
    stream::run_actors(context_, std::move(actors_));
    if (result.schema().size() == 0) {
        return table::TableBuilder(std::move(answer)).finish();
    }
    SPILLWAY_ASSERT(result.schema() == answer, "a query's answer has another schema than it declares");
    return result;
}

}  // namespace spillway::tpch::detail
