#pragma once
/// @file
/// `spillway generate`: writes a TPC-H-like table as a CSV file, to try
/// `spillway partition` on (and to benchmark it).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <spillway/core/options.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/table/csv_options.hpp>
#include <spillway/table/csv_writer.hpp>
#include <spillway/table/tpch_generator.hpp>

#include "job.hpp"
#include "staged_output.hpp"

namespace spillway::cli {

/// What `spillway generate` is asked to do.
struct GenerateArguments {
    std::string table;              ///< `lineitem` or `orders`
    std::filesystem::path output;   ///< the file to write
};

/// Generates table `lineitem` or `orders` of `table::TpchGenerator` at scale
/// `scale` from seed `seed`, chunk by chunk on a thread pool with `window`
/// chunks in flight, and writes it to one file in chunk order: TPC-H `.tbl`
/// when the file name ends in `.tbl`, else CSV with a header (the `csv_*`
/// options apply on top). The same scale and seed give the same file
/// whatever the threads and window. There is nothing to verify.
///
/// Options read: `scale` (default 1), `seed` (default 0), `threads`, `window`
/// (default 4 per thread), the `csv_*` options.
class GenerateJob final : public Job {
  public:
    /// Checks the arguments and options and creates the output file's
    /// partial file beside it (`StagedFile`): the output appears only when
    /// the run succeeds.
    /// @throws InvalidArgument if the table is unknown or an option is
    ///         malformed; IoError naming the file if it cannot be created.
    GenerateJob(GenerateArguments arguments, Options const& options);

    [[nodiscard]] RunSummary run(Progress& progress) override;

  private:
    GenerateArguments arguments_;
    table::TpchGenerator generator_;
    table::CsvOptions csv_;
    exec::ThreadPool pool_;
    std::size_t window_;
    StagedFile output_;  ///< the file appears when the run has written all of it
    std::unique_ptr<table::CsvWriter> writer_;
};

}  // namespace spillway::cli
