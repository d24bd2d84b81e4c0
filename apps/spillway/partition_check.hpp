#pragma once
/// @file
/// Verifies the files of a repartition by reading them back.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <spillway/exec/executor.hpp>
#include <spillway/exec/seq_join_options.hpp>
#include <spillway/io/file_format.hpp>
#include <spillway/io/csv_options.hpp>
#include <spillway/table/schema.hpp>
#include <spillway/table/table_checksum.hpp>

#include "csv_input.hpp"
#include "progress.hpp"
#include "run_summary.hpp"

namespace spillway::cli {

/// What reading back the files of a repartition found.
struct PartitionCheck {
    /// The checksum of every row read back (`io::CsvRows::checksum`), to
    /// compare with the input's.
    table::TableChecksum checksum;
    /// Rows whose key hashes to a partition other than their file's.
    std::uint64_t misplaced_rows = 0;
    /// Where the first misplaced row is, for people; empty if there is none.
    std::string first_misplaced;

    /// Adds what `other` found, after this: the first misplaced row stays
    /// this one's, if it has one.
    PartitionCheck& operator+=(PartitionCheck other);
};

/// Reads back `files[p]`, the file of partition `p` of `files.size()`, with
/// the dialect, schema and keys of `input`, on `executor` with `window`
/// blocks in flight and `join_options` (a tracer's observer, say). Checks
/// that the keys of every row hash to its file's partition, and sums the
/// checksum of every row. Advances `progress` by the bytes of each block.
/// Requires: `files` is not empty and holds fewer than 2^32 files.
/// @throws IoError / CorruptData naming the file if one cannot be read.
[[nodiscard]] PartitionCheck check_partition_files(std::vector<std::filesystem::path> const& files,
                                                   CsvInput const& input, exec::Executor& executor,
                                                   std::size_t window, exec::SeqJoinOptions join_options,
                                                   Progress& progress);

/// Sets `summary.verified` and its two lines of `verification` from what
/// reading the files back found, `check`, and `input`, the checksum of every
/// input row: whether every row is in its partition's file (naming where
/// the first misplaced one is, if `check` knows), and whether the rows read
/// back equal the input's.
void report_partition_check(PartitionCheck const& check, table::TableChecksum const& input, RunSummary& summary);

/// One file of a repartition: the partition it holds, where it is, and for
/// CSV the longest row written to it (`io::TableFileWriter::longest_row_bytes`).
struct PartitionFile {
    std::uint32_t partition;
    std::filesystem::path path;
    std::size_t longest_row_bytes = 0;
};

/// Reads back `files`, files of `format` (CSV with `csv` and `schema`) of
/// some of `partitions` partitions, on `executor` with `window` pieces in
/// flight and `join_options`: Parquet files a row group at a time, each
/// read and checked by a worker in batches (`io::ParquetRowGroups::reader`),
/// other files a table at a time, read in turn and checked by the workers,
/// CSV in blocks of `csv.chunk_bytes`, or of the file's longest row where
/// that is larger.
/// Checks that the key columns `keys` of every row hash to its file's
/// partition, and sums the checksum of all columns of every row
/// (`table::TableChecksum`). Advances `progress` by the rows of each table.
/// @throws IoError / CorruptData naming the file if one cannot be read.
[[nodiscard]] PartitionCheck check_partition_tables(std::vector<PartitionFile> const& files, std::uint32_t partitions,
                                                    io::FileFormat format, io::CsvOptions const& csv,
                                                    table::Schema const& schema, std::vector<std::size_t> const& keys,
                                                    exec::Executor& executor, std::size_t window,
                                                    exec::SeqJoinOptions join_options, Progress& progress);

}  // namespace spillway::cli
