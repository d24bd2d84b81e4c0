#pragma once
/// @file
/// TPC-H queries as streaming pipelines of spillway's operators, run by
/// every rank of a communicator over the tables it reads.
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <spillway/comm/communicator.hpp>
#include <spillway/exec/executor.hpp>
#include <spillway/shuffle/shuffle_config.hpp>
#include <spillway/shuffle/shuffler.hpp>
#include <spillway/table/table.hpp>
#include <spillway/table/tpch_generator.hpp>

namespace spillway::tpch {

/// Where a query reads the TPC-H tables: each table in chunks, of which
/// rank r of n reads chunks r, r + n, ... Both functions may be called from
/// several threads at once.
struct TableSource {
    /// The number of chunks of a table.
    std::function<std::size_t(table::TpchTable)> num_chunks;
    /// Chunk `chunk` of a table, with at least the columns named `columns`
    /// (those the query reads, named as `TpchGenerator::schema` names them),
    /// of those types; more columns are allowed.
    std::function<table::Table(table::TpchTable, std::size_t chunk, std::span<std::string const> columns)> chunk;
};

/// The tables `generator` makes, every column of each. Lifetime: the
/// generator must outlive the source.
[[nodiscard]] TableSource generated_tables(table::TpchGenerator const& generator);

/// How a rank runs a query.
struct QueryConfig {
    /// The lanes of the pipeline: actors that read, filter and project
    /// chunks at once, per scan, and the actors of each operator after a
    /// scan or a shuffle, side by side (a shuffle's partition p in lane
    /// p % workers). At least 1.
    std::size_t workers = 2;
    /// Partitions of each hash shuffle, across all ranks. A partitioned
    /// join holds one build partition in memory at a time, so more
    /// partitions fit a larger build side into a small limit.
    shuffle::PartitionId partitions = 32;
    /// Settings of the shuffles and all-gathers.
    shuffle::ShuffleConfig shuffle;
};

/// The numbers of the TPC-H queries spillway implements, in increasing order.
[[nodiscard]] std::span<int const> implemented_queries() noexcept;

/// The numbers of `implemented_queries()` as text, such as "1, 3, 21".
[[nodiscard]] std::string implemented_queries_text();

/// Checks that query `number` is one of `implemented_queries()`.
/// @throws InvalidArgument naming the queries there are if it is not.
void check_implemented(int number);

/// Runs TPC-H query `number` (with the specification's validation
/// parameters) as this rank's part of a pipeline over `communicator`'s
/// ranks; every rank calls it with the same arguments, and every rank gets
/// the whole answer. Its columns are named as the query's select list, its
/// rows ordered as its ORDER BY (and cut by its LIMIT). Decimals are
/// `float64`; dates `date32`.
///
/// The pipeline's actors run on `executor` (shared by ranks of one process
/// if need be) and its data lives in the communicator's buffer resource:
/// messages between operators and everything a shuffle, an all-gather or a
/// join waits for can spill; the tables an operator works on at once must
/// fit. The collectives use op ids from `first_op_id` up, at most 16. The
/// answer's storage is the resource's too: destroy it before the resource.
/// @throws InvalidArgument if `number` is not one of `implemented_queries()`,
///         or `config.workers` is 0.
/// @throws OutOfMemory if the tables the query works on at once do not fit
///         in the resource's HOST limit within its reserve timeout.
/// @throws the errors of the collectives and of reading the source.
[[nodiscard]] table::Table run_query(int number, comm::Communicator& communicator, exec::Executor& executor,
                                     TableSource const& source, QueryConfig const& config,
                                     shuffle::OpId first_op_id = 0);

}  // namespace spillway::tpch
