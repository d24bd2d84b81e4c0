#pragma once
/// @file
/// `spillway tpch`: runs a TPC-H query over generated tables on the ranks of
/// a job, under a memory limit, and prints its answer.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>

#include <spillway/core/options.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/io/parquet_row_groups.hpp>
#include <spillway/table/tpch_generator.hpp>
#include <spillway/tpch/queries.hpp>

#include "job.hpp"
#include "rank_group.hpp"

namespace spillway::cli {

/// What `spillway tpch` is asked to do.
struct TpchArguments {
    int query = 0;               ///< the TPC-H query's number
    std::filesystem::path data;  ///< a directory of `<table>.parquet` files; empty: generate the tables
};

/// Runs TPC-H query `query` (`tpch::run_query`) on every rank of a
/// `RankGroup`, over the tables of `table::TpchGenerator(scale, seed)`,
/// which each rank generates its chunks of as the query reads them; or,
/// with `data`, over the Parquet files `<data>/<table>.parquet` (as
/// `spillway generate --tables all --output-format parquet` writes them),
/// whose row groups the ranks share out and read as the query needs them.
/// Progress counts the bytes of the tables read. The summary holds the
/// answer (`RunSummary::answer`), the rows and bytes of the tables read, the
/// time, the bytes spilled and the peak memory: of this process's ranks
/// (over MPI, those of process 0, which prints). There is nothing to
/// verify: `bench/tpch/tpch_duckdb.py` checks answers against DuckDB's.
///
/// Defaults: 1 in-process rank, scale 1, 32 partitions per shuffle, the
/// memory options' defaults.
///
/// Options read: `ranks`, `comm`, `scale`, `seed`, `partitions`, `threads`,
/// the memory options, the shuffle options and `comm_mpi_*`.
class TpchJob final : public Job {
  public:
    /// @throws InvalidArgument if the query is not implemented, an option is
    ///         malformed, or a table's file is missing from `data` or lacks
    ///         a column of the table or has it of another type; IoError
    ///         if a spill directory cannot be made; CorruptData naming a file
    ///         of `data` that is not Parquet.
    TpchJob(TpchArguments arguments, Options const& options);
    [[nodiscard]] RunSummary run(Progress& progress) override;

  private:
    TpchArguments arguments_;
    table::TpchGenerator generator_;
    /// With `data`: each table's file.
    std::map<table::TpchTable, std::unique_ptr<io::ParquetRowGroups>> files_;
    RankGroup ranks_;
    exec::ThreadPool pool_;
    tpch::QueryConfig config_;
};

}  // namespace spillway::cli
