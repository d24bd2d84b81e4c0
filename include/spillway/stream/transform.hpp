#pragma once
/// @file
/// `transform_tables`: a function applied to every table of a stream, on
/// several actors at once, with the results in the stream's order.

#include <cstddef>
#include <functional>
#include <vector>

#include <spillway/stream/actor.hpp>
#include <spillway/stream/channel.hpp>
#include <spillway/table/table.hpp>

namespace spillway::stream {

/// What `transform_tables` applies: a table in, a table out (a filter, a
/// projection, a partial aggregation). It may run on several threads at
/// once, each call with a table of its own.
using TableFunction = std::function<table::Table(table::Table const&)>;

/// The actors that apply `function` to the table of every message of
/// `input` (`unpack_table`) and send each result (`pack_table`) to `output`
/// under its message's number, in the input's order. `workers` actors take
/// messages from `input` as each is free, so up to `workers` tables are
/// transformed at once; each sends its results to a channel of its own, and
/// a `linearise` merges those back into order. The input must be in
/// non-decreasing sequence order; messages of equal numbers may change
/// places among themselves.
///
/// The tables in and out count against the context's resource (the
/// function runs in a `memory::ScopedHostResource` of it), and a result's
/// packed copy is reserved with `reserve_memory`. The actors close `input`
/// and `output` when they end; a function that throws aborts the pipeline
/// with its exception. Run all of them (`run_actors`).
/// @throws InvalidArgument if `workers` is 0 or `function` is empty.
[[nodiscard]] std::vector<Actor> transform_tables(
    Channel& input, Channel& output, TableFunction function, std::size_t workers
);

}  // namespace spillway::stream
