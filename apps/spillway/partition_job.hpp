#pragma once
/// @file
/// `spillway partition`: an out-of-core repartition of CSV files into one
/// file per hash partition of a key, verified.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spillway/core/options.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/io/csv_writer.hpp>

#include "csv_input.hpp"
#include "job.hpp"
#include "partition_plan.hpp"
#include "staged_output.hpp"

namespace spillway::cli {

/// What `spillway partition` is asked to do.
struct PartitionArguments {
    std::vector<std::filesystem::path> inputs;
    std::vector<std::string> keys;  ///< column names or numbers
    std::filesystem::path output;   ///< a directory, made if missing, that must be empty
    std::vector<std::string> schema;  ///< `column:type` entries: the declared types of those columns
    std::string input_format;         ///< `csv`, `parquet` or `arrow`; empty: from the first input's name
    std::string output_format;        ///< as `input_format`; empty: the input's
    std::string compression;          ///< of Parquet and Arrow output; empty: zstd
};

/// Splits the rows of CSV files into `partitions` files by the hash of their
/// key columns (`table::partition_index` of the key's row hash), copying each
/// row verbatim and keeping the input order within each file, then reads the
/// files back to verify them: every row is in the file of its partition, and
/// the row count and checksum of the rows (`io::CsvRows::checksum`) equal
/// the input's.
///
/// Blocks of whole rows stream through a `seq_join`: worker threads parse
/// only the key columns, hash them and split the block's rows by partition;
/// the calling thread appends each block's pieces to the partition files in
/// input order. Memory stays within the limit as `PartitionPlan` describes.
/// Output files are `part-NNNNN<ext>` (`csv_partition_extension` of the first input), with the
/// first input's header line as it is, if it has one. Inputs whose columns
/// are in another order have their rows' fields rewritten into the first
/// input's order. With `csv_bad_rows` = `skip`, rows with the wrong number of
/// fields are left out and counted in the summary (`skipped_rows`). Files
/// are written and verified in a staging directory inside the output
/// directory (`StagedOutput`), and moved into it only when verification
/// passes: a run that fails or does not verify leaves the output directory
/// as it was (removed, if the run made it).
///
/// Options read: `partitions`, `threads`, `window`, `memory_limit_host`,
/// the `csv_*` options; the option `ranks` must be 1.
class PartitionJob final : public Job {
  public:
    /// Checks the arguments and options, opens the inputs, plans the memory,
    /// and creates the output directory and the files in its staging
    /// directory.
    /// @throws InvalidArgument, IoError or CorruptData naming what is wrong
    ///         (see `CsvInput::open` and `PartitionPlan::make`); if the output
    ///         directory is not empty or cannot be made; if the partition
    ///         files would exceed the limit on open files.
    PartitionJob(PartitionArguments arguments, Options const& options);

    [[nodiscard]] RunSummary run(Progress& progress) override;
    void commit() override;

  private:
    CsvInput input_;
    std::filesystem::path output_;
    std::vector<std::string> key_names_;
    std::uint32_t partitions_;
    PartitionPlan plan_;
    bool verified_ = false;  ///< whether `run` verified the output
    std::optional<StagedOutput> staged_output_;                      ///< made once the checks pass
    std::vector<std::filesystem::path> output_files_;                ///< in the staging directory, by partition
    std::vector<std::unique_ptr<io::CsvWriter>> writers_;         ///< by partition
    exec::ThreadPool pool_;
    /// How long a join's window may make no progress before it is reported
    /// (option `seq_join_stall_timeout`; 0: never).
    std::chrono::nanoseconds stall_timeout_{};
};

}  // namespace spillway::cli
