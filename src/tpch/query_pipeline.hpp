#pragma once
/// @file
/// One rank's pipeline of a query, built operator by operator: each method
/// adds actors and returns the channel of their output.
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <spillway/query/actors.hpp>
#include <spillway/shuffle/all_gather.hpp>
#include <spillway/shuffle/shuffler.hpp>
#include <spillway/stream/context.hpp>
#include <spillway/tpch/queries.hpp>

namespace spillway::tpch::detail {

/// The actors, channels and collectives of one rank's query, and the run
/// that connects them. Every rank builds the same pipeline, so that the
/// collectives take the same op ids everywhere.
///
/// Thread safety: externally synchronized. Lifetime: the communicator, the
/// executor and the source must outlive it.
class QueryPipeline {
  public:
    QueryPipeline(comm::Communicator& communicator, exec::Executor& executor, TableSource const& source,
                  QueryConfig const& config, shuffle::OpId first_op_id);

    /// The rows of `table` this rank reads (chunks rank, rank + ranks, ...),
    /// each chunk put through `function` (a filter and projection) as soon
    /// as it is read, on the configured number of workers, in chunk order.
    /// `columns` are those `function` reads; a source need not read others.
    stream::Channel& scan(table::TpchTable table, std::vector<std::string> columns, stream::TableFunction function);
    /// Every rank's tables of `input`, on every rank.
    stream::Channel& gather(stream::Channel& input);
    /// The tables of `input` hash-shuffled by the columns `keys`: this
    /// rank's partitions, each numbered by partition.
    stream::Channel& shuffle(stream::Channel& input, std::vector<std::string> keys);
    /// `function` of each partition of `input` (see `query::apply_per_partition`):
    /// of a shuffle's or a partitioned join's output, whose partitions come
    /// in any order.
    stream::Channel& per_partition(stream::Channel& input, stream::TableFunction function);
    /// `function` of all of `input` (see `query::apply_to_all`).
    stream::Channel& all(stream::Channel& input, stream::TableFunction function);
    /// `probe` joined with all of `build` on every rank: `build` is gathered first.
    stream::Channel& broadcast_join(stream::Channel& build, stream::Channel& probe, query::JoinSpec spec);
    /// `build` and `probe` shuffled by their join keys and joined partition by partition.
    stream::Channel& partitioned_join(stream::Channel& build, stream::Channel& probe, query::JoinSpec spec);

    /// Runs every actor until the pipeline ends; returns what reached
    /// `output`. Call once.
    /// @throws the first error of an actor.
    [[nodiscard]] table::Table run(stream::Channel& output);

  private:
    /// A new channel of the pipeline.
    stream::Channel& channel(stream::ChannelLimits limits = {});
    /// The next op id; every rank takes them in the same order.
    shuffle::OpId next_op_id();

    comm::Communicator& communicator_;
    TableSource const& source_;
    QueryConfig const config_;
    shuffle::OpId next_op_id_;
    stream::Context context_;
    std::deque<stream::Channel> channels_;
    std::deque<shuffle::Shuffler> shufflers_;
    std::deque<shuffle::AllGather> gathers_;
    std::vector<stream::Actor> actors_;
};

}  // namespace spillway::tpch::detail
