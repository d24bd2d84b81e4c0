#pragma once
/// @file
/// `spillway partition` of Parquet and Arrow IPC files, and of CSV files into
/// either: rows travel as tables, verified.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spillway/core/mutex.hpp>
#include <spillway/core/options.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/io/table_file.hpp>

#include "job.hpp"
#include "partition_input.hpp"
#include "partition_job.hpp"
#include "partition_plan.hpp"
#include "staged_output.hpp"

namespace spillway::cli {

/// Splits the rows of the input files into `partitions` files by the hash of
/// their key columns, as `PartitionJob` does, when the input or the output is
/// not CSV: Parquet or Arrow IPC in, any of CSV, Parquet and Arrow IPC out.
/// Rows travel as tables: batches of Parquet rows or Arrow record batches
/// (read by the thread that pulls the `seq_join`'s input), or CSV blocks
/// parsed whole by the workers, are hashed and split on the thread pool,
/// and each worker appends its pieces to the partitions' files itself (one
/// lock per file; a file another worker is writing is left until the others
/// are done), so that encoding and compressing the output runs in
/// parallel. In a file, the rows of one input table stay together and in
/// their order; the tables come in the order the workers finish them. Files
/// are `part-NNNNN.<format>` (`.csv`, `.parquet`, `.arrow`) in the first
/// input's column order; Parquet files are zstd-compressed unless told
/// otherwise, with statistics, in row groups of at most 2^20 rows and of at
/// most the plan's write buffer of column data, which bounds the memory each
/// open file holds.
///
/// Verification reads every file back: each row hashes to its file's
/// partition, and the row count and checksum of all columns
/// (`table::TableChecksum`) equal the input's. Files are written and
/// verified in a staging directory (`StagedOutput`) and appear in the output
/// directory only when verification passes.
///
/// Memory: `PartitionPlan` with blocks of the input's largest read (the
/// largest Parquet row group uncompressed; an Arrow file's size; the CSV
/// block size).
///
/// Options read: those of `PartitionJob`, and the arguments' formats and
/// compression.
class TablePartitionJob final : public Job {
  public:
    /// Checks the arguments and options, opens the inputs, plans the memory,
    /// and creates the output directory and the files in its staging
    /// directory.
    /// @throws InvalidArgument, IoError or CorruptData naming what is wrong
    ///         (see `CsvInput::open`, `TableInput::open` and
    ///         `PartitionPlan::make`), or if a format or the compression is
    ///         unknown.
    TablePartitionJob(PartitionArguments arguments, Options const& options);

    [[nodiscard]] RunSummary run(Progress& progress) override;
    void commit() override;

  private:
    PartitionInput input_;
    io::FileFormat output_format_;
    std::string compression_;
    std::filesystem::path output_;
    std::vector<std::string> key_names_;
    std::uint32_t partitions_;
    PartitionPlan plan_;
    bool verified_ = false;  ///< whether `run` verified the output
    std::optional<StagedOutput> staged_output_;                  ///< made once the checks pass
    /// The writer of one partition's file, which one worker at a time appends to.
    struct PartitionWriter {
        Mutex mutex;
        std::unique_ptr<io::TableFileWriter> file SPILLWAY_GUARDED_BY(mutex);
    };

    std::vector<std::filesystem::path> output_files_;        ///< in the staging directory, by partition
    std::vector<std::unique_ptr<PartitionWriter>> writers_;  ///< by partition
    exec::ThreadPool pool_;
    /// How long a join's window may make no progress before it is reported
    /// (option `seq_join_stall_timeout`; 0: never).
    std::chrono::nanoseconds stall_timeout_{};
};

/// Whether `spillway partition` with `arguments` copies CSV rows verbatim
/// (`PartitionJob`: CSV in and out) rather than moving tables
/// (`TablePartitionJob`).
/// @throws InvalidArgument if a format named is unknown.
[[nodiscard]] bool partitions_csv_verbatim(PartitionArguments const& arguments);

}  // namespace spillway::cli
