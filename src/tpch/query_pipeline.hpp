#pragma once
/// @file
/// One rank's pipeline of a query, built operator by operator: each method
/// adds actors and returns the flow of their output.
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

/// A stream of tables between the operators of a pipeline, carried by one
/// or more channels (lanes), each with actors of its own that run side by
/// side: a scan's workers' output, or a shuffle's partitions spread over
/// the lanes by number (partition p in lane p % lanes), so that operators
/// on whole partitions run one per lane.
struct Flow {
    std::vector<stream::Channel*> lanes;
};

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
    /// as it is read, by one of the configured number of workers, each
    /// sending what it makes to a lane of its own. `columns` are those
    /// `function` reads; a source need not read others.
    Flow& scan(table::TpchTable table, std::vector<std::string> columns, stream::TableFunction function);
    /// Every rank's tables of `input`, on every rank, in one lane.
    Flow& gather(Flow& input);
    /// The tables of `input` hash-shuffled by the columns `keys`: this
    /// rank's partitions, each numbered by partition, spread over the lanes.
    Flow& shuffle(Flow& input, std::vector<std::string> keys);
    /// `function` of each partition of `input` (see `query::apply_per_partition`),
    /// lane by lane: of a shuffle's or a partitioned join's output.
    Flow& per_partition(Flow& input, stream::TableFunction function);
    /// `function` of all of `input` (see `query::apply_to_all`), in one lane.
    Flow& all(Flow& input, stream::TableFunction function);
    /// `probe` joined with all of `build` on every rank, lane by lane:
    /// `build` is gathered first, and each of `probe`'s lanes gets a copy.
    Flow& broadcast_join(Flow& build, Flow& probe, query::JoinSpec spec);
    /// `build` and `probe` shuffled by their join keys and joined partition
    /// by partition, lane by lane.
    Flow& partitioned_join(Flow& build, Flow& probe, query::JoinSpec spec);

    /// Runs every actor until the pipeline ends; returns what reached
    /// `output`, whose schema is `answer`: a table of no rows of that
    /// schema when nothing did (an operator sends no empty tables). Call once.
    /// @throws the first error of an actor.
    [[nodiscard]] table::Table run(Flow& output, table::Schema answer);

  private:
    /// A new channel of the pipeline.
    stream::Channel& channel(stream::ChannelLimits limits = {});
    /// A new flow of `lanes` new channels.
    Flow& flow(std::size_t lanes, stream::ChannelLimits limits = {});
    /// The messages of every lane of `input` in one channel, as they come.
    stream::Channel& merged(Flow& input);
    /// The next op id; every rank takes them in the same order.
    shuffle::OpId next_op_id();

    comm::Communicator& communicator_;
    TableSource const& source_;
    QueryConfig const config_;
    shuffle::OpId next_op_id_;
    stream::Context context_;
    std::deque<stream::Channel> channels_;
    std::deque<Flow> flows_;
    std::deque<shuffle::Shuffler> shufflers_;
    std::deque<shuffle::AllGather> gathers_;
    std::vector<stream::Actor> actors_;
};

}  // namespace spillway::tpch::detail
