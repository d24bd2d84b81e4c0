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
#include <spillway/io/csv_splits.hpp>
#include <spillway/io/parquet_row_groups.hpp>
#include <spillway/table/tpch_generator.hpp>
#include <spillway/tpch/queries.hpp>

#include "job.hpp"
#include "rank_group.hpp"

namespace spillway::cli {

/// What `spillway tpch` is asked to do.
struct TpchArguments {
    int query = 0;               ///< the TPC-H query's number
    std::filesystem::path data;  ///< a directory of `<table>.parquet` or `.tbl` files; empty: generate the tables
};

/// Runs TPC-H query `query` (`tpch::run_query`) on every rank of a
/// `RankGroup`, over the tables of `table::TpchGenerator(scale, seed)`,
/// which each rank generates its chunks of as the query reads them; or,
/// with `data`, over the files `<data>/<table>.parquet`, or where there is
/// none `<data>/<table>.tbl` (as `spillway generate --tables all` writes
/// them, with `--output-format parquet` or without), whose row groups or
/// splits of about 4 MiB (`io::CsvSplits`) the ranks share out and read as
/// the query needs them.
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
    ///         malformed, or a table's file is missing from `data` or (if
    ///         Parquet) lacks a column of the table or has it of another
    ///         type; IoError if a spill directory cannot be made or a file
    ///         of `data` cannot be read; CorruptData naming a Parquet file
    ///         of `data` that is not Parquet.
    TpchJob(TpchArguments arguments, Options const& options);
    [[nodiscard]] RunSummary run(Progress& progress) override;

  private:
    TpchArguments arguments_;
    table::TpchGenerator generator_;
    /// A table's file in `data`, read a chunk at a time: Parquet by row
    /// group, `.tbl` by split.
    struct TableFile {
        std::filesystem::path path;
        std::unique_ptr<io::ParquetRowGroups> parquet;  ///< one of these two
        std::unique_ptr<io::CsvSplits> tbl;

        [[nodiscard]] std::size_t chunks() const noexcept { return parquet ? parquet->size() : tbl->size(); }
        [[nodiscard]] table::Table read(std::size_t chunk, std::span<std::string const> columns) const {
            return parquet ? parquet->read(chunk, columns) : tbl->read(chunk, columns);
        }
    };
    /// With `data`: each table's file.
    std::map<table::TpchTable, TableFile> files_;
    RankGroup ranks_;
    exec::ThreadPool pool_;
    tpch::QueryConfig config_;
};

}  // namespace spillway::cli
