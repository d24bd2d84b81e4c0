#pragma once
/// @file
/// The relational operators as actors of a streaming pipeline: a source of
/// tables, functions over whole partitions or whole streams, hash joins in
/// broadcast and partitioned form, and a sink that collects a table.
///
/// Filter, project and the partial phase of a group-by apply to each table
/// on its own, so they run as `stream::transform_tables`. The operators
/// here need more than one table at a time. Those that wait for a whole
/// partition or stream keep its messages parked where they came parked (the
/// `stream::SpillableMessages` of the input channel's context), spillable,
/// until they use them; only the tables they work on at once must fit in
/// memory. Reading a spilled message back waits for memory until the
/// actor's own context is aborted: its output channel's (`collect_table`'s
/// input's).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <spillway/query/hash_join.hpp>
#include <spillway/stream/actor.hpp>
#include <spillway/stream/channel.hpp>
#include <spillway/stream/transform.hpp>
#include <spillway/table/table.hpp>

namespace spillway::query {

/// Makes table `index` of a source (a generator's chunk, a file's row group).
using TableMaker = std::function<table::Table(std::size_t index)>;

/// An actor that sends `make(i)` numbered `i` to `output` for `i = first,
/// first + step, ...` below `count`, so that rank `r` of `n` takes every
/// `n`th table from `r`. `make` runs on the executor's threads, one call at
/// a time, its tables counted against the context's resource; each is
/// packed with `stream::pack_table`. Closes `output` at the end.
/// @throws InvalidArgument (at once) if `step` is 0 or `make` is empty.
/// @throws (from the actor) what `make` or `pack_table` throws.
[[nodiscard]] stream::Actor send_tables(
    stream::Channel& output, std::size_t count, TableMaker make, std::size_t first = 0, std::size_t step = 1
);

/// An actor that applies `function` to each partition of `input`: a run of
/// messages with equal sequence numbers, such as `stream::shuffle_tables`
/// sends. The result of the concatenated tables of a partition goes to
/// `output` under the partition's number. The messages of the partition
/// being gathered wait parked (spillable) until it is whole.
/// @throws InvalidArgument (at once) if `function` is empty.
/// @throws (from the actor) what `function` throws; InvalidArgument if the
///         tables of a partition have different schemas.
[[nodiscard]] stream::Actor apply_per_partition(
    stream::Channel& input, stream::Channel& output, stream::TableFunction function
);

/// An actor that applies `function` to the concatenation of every table of
/// `input` (a final aggregation, a sort) once the input ends, and sends the
/// result numbered 0. The messages wait parked (spillable) until then. An
/// input without messages sends nothing.
/// @throws as `apply_per_partition`.
[[nodiscard]] stream::Actor apply_to_all(
    stream::Channel& input, stream::Channel& output, stream::TableFunction function
);

/// An actor that joins consecutive tables of `input` until their messages
/// hold at least `min_bytes` together (`stream::ParkedMessage::bytes`: each
/// table packed, with its metadata, so the joined table's columns may hold
/// somewhat less; the last may be smaller) and sends each to `output`
/// numbered as the first it holds. Put it in front of a hash shuffle of a
/// stream of small tables: each table is split into a piece per partition,
/// and pieces of a few rows cost more in metadata and bookkeeping than
/// they carry. The tables wait parked (spillable) until enough have come.
/// A table as large as `min_bytes` that comes with nothing gathered before
/// it passes through as it is.
/// @throws InvalidArgument (at once) if `min_bytes` is 0; (from the actor)
///         if the tables have different schemas.
[[nodiscard]] stream::Actor coalesce_tables(stream::Channel& input, stream::Channel& output, std::size_t min_bytes);

/// What a join matches: the key columns of each side, and the kind.
struct JoinSpec {
    std::vector<std::string> build_keys;
    std::vector<std::string> probe_keys;
    JoinKind kind = JoinKind::inner;
};

/// An actor that joins every table of `probe` with the whole of `build`:
/// it gathers `build` into one `JoinHashTable` (the build side must fit in
/// memory), then probes it with each table of `probe` as it comes and sends
/// the result under the probe message's number. Over several ranks, put a
/// `stream::all_gather` in front of `build` (a broadcast join). A `build`
/// without messages is a build side without rows, of unknown columns: an
/// `anti` join then passes each probe table through, the others send
/// nothing, and the keys are not checked.
/// @throws as `JoinHashTable` and `JoinHashTable::probe`.
[[nodiscard]] stream::Actor broadcast_join(
    stream::Channel& build, stream::Channel& probe, stream::Channel& output, JoinSpec spec
);

/// An actor that joins two streams partitioned alike, partition by
/// partition (a partitioned, or grace, hash join): both come from
/// `stream::shuffle_tables` with shufflers of the same partition count,
/// each by its side's join keys, so that rows with equal keys share a
/// partition number. The build side's messages wait parked (spillable) by
/// partition; when the probe side's partition `p` arrives, only build
/// partition `p` is read back into a hash table. So memory holds one build
/// partition at a time: choose enough partitions for one to fit. Results go
/// out under the partition's number. The tables of one probe partition must
/// come together, as `stream::shuffle_tables` sends them.
/// @throws as `broadcast_join`; InvalidArgument if a partition of `probe`
///         comes again after another one (its build side is gone then).
[[nodiscard]] stream::Actor partitioned_join(
    stream::Channel& build, stream::Channel& probe, stream::Channel& output, JoinSpec spec
);

/// An actor that receives every table of `input` and leaves their
/// concatenation in `result`, in message order (empty, without columns, if
/// none came). `result`'s storage counts against the context's resource.
/// Requires: `result` outlives the actor.
[[nodiscard]] stream::Actor collect_table(stream::Channel& input, table::Table& result);

}  // namespace spillway::query
