#pragma once
/// @file
/// `spillway generate`: writes TPC-H tables as CSV files, to try `spillway
/// partition` on, to check `spillway tpch` against other engines, and to
/// benchmark both.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spillway/core/options.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/io/file_format.hpp>
#include <spillway/io/table_file.hpp>
#include <spillway/io/csv_options.hpp>
#include <spillway/io/csv_writer.hpp>
#include <spillway/table/tpch_generator.hpp>

#include "job.hpp"
#include "staged_output.hpp"

namespace spillway::cli {

/// What `spillway generate` is asked to do.
struct GenerateArguments {
    std::string table = "lineitem";   ///< one table (`--table`, default lineitem), written to the file `output`
    std::vector<std::string> tables;  ///< tables, or `all` (`--tables`), written into the directory `output`
    std::filesystem::path output;     ///< the file or directory to write
    /// `csv`, `parquet` or `arrow`; empty: from `output`'s extension
    /// (`--table`), or `.tbl` files (`--tables`).
    std::string output_format;
};

/// Generates tables of `table::TpchGenerator` at scale `scale` from seed
/// `seed`, chunk by chunk on a thread pool with `window` chunks in flight,
/// and writes each to one file in chunk order.
///
/// With `table`, it writes that table to the file `output`, in
/// `output_format` or else the format its extension implies: for CSV, TPC-H
/// `.tbl` when the name ends in `.tbl`, else CSV with a header. With
/// `tables`, it writes each (`all`: the eight) as `<output>/<table>.tbl`,
/// or `<output>/<table>.parquet` (`.arrow`) in those formats; the directory
/// must be new or empty, and the files appear together when all are written
/// (`StagedOutput`). The `csv_*` options apply on top. Parquet files get
/// zstd and row groups of about 4 MiB of column data, so that ranks can
/// share them out (`spillway tpch --data`). The same scale and seed give the
/// same files whatever the threads and window, and the rows `spillway tpch`
/// queries. There is nothing to verify.
///
/// Options read: `scale` (default 1), `seed` (default 0), `threads`, `window`
/// (default 4 per thread), the `csv_*` options.
class GenerateJob final : public Job {
  public:
    /// Checks the arguments and options and creates the output file's
    /// partial file beside it (`StagedFile`): the output appears only when
    /// the run succeeds.
    /// @throws InvalidArgument if a table is unknown or an option is
    ///         malformed, if the output directory is not empty, or if the
    ///         output file is refused (`StagedFile`: `-`, a device or a pipe)
    ///         or names a compressed file (`io::names_compressed_file`), or
    ///         if its partial file cannot be made; IoError naming the file
    ///         if its writer cannot open it.
    GenerateJob(GenerateArguments arguments, Options const& options);

    [[nodiscard]] RunSummary run(Progress& progress) override;
    void commit() override;

  private:
    /// One table to write, and its file's writer: CSV text, formatted by
    /// the workers, or tables.
    struct TableOutput {
        table::TpchTable table;
        std::unique_ptr<io::CsvWriter> csv;
        std::unique_ptr<io::TableFileWriter> file;
    };

    GenerateArguments arguments_;
    table::TpchGenerator generator_;
    io::FileFormat format_;
    io::CsvOptions csv_;
    exec::ThreadPool pool_;
    std::size_t window_;
    /// Where the files appear when the run has written all of them: one of the two.
    std::optional<StagedFile> file_;
    std::optional<StagedOutput> directory_;
    std::vector<TableOutput> outputs_;  ///< in the order they are written
    /// How long a join's window may make no progress before it is reported
    /// (option `seq_join_stall_timeout`; 0: never).
    std::chrono::nanoseconds stall_timeout_{};
};

}  // namespace spillway::cli
