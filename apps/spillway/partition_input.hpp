#pragma once
/// @file
/// The input of a `spillway partition` whose rows travel as tables: CSV,
/// Parquet or Arrow IPC files, read as tables by whichever rank's share.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <variant>
#include <vector>

#include <spillway/core/options.hpp>
#include <spillway/io/file_format.hpp>
#include <spillway/io/parquet_row_groups.hpp>
#include <spillway/io/csv_options.hpp>
#include <spillway/table/schema.hpp>
#include <spillway/table/table.hpp>

#include "csv_input.hpp"
#include "partition_job.hpp"
#include "table_input.hpp"

namespace spillway::cli {

/// The input format `arguments` name, or the one the first input's name implies.
/// @throws InvalidArgument if the format named is unknown.
[[nodiscard]] io::FileFormat input_format_of(PartitionArguments const& arguments);

/// The output format `arguments` name, or the input's.
/// @throws InvalidArgument if a format named is unknown.
[[nodiscard]] io::FileFormat output_format_of(PartitionArguments const& arguments);

/// What a source of input hands out, for a worker to make a table of: a CSV
/// block to parse, or a table read.
using InputPiece = std::variant<FileBlock, FileTable>;

/// A table of input rows, with the rows that were left out.
struct InputTable {
    table::Table table;
    std::uint64_t skipped_rows = 0;  ///< bad CSV rows skipped (`--bad-rows skip`)
    std::uint64_t progress = 0;      ///< in `PartitionInput::progress_unit`s
};

/// The input files of a repartition, checked, and the key columns: CSV files
/// (`CsvInput`) or Parquet and Arrow IPC files (`TableInput`).
///
/// Thread safety: const member functions may be called concurrently; a
/// source is externally synchronized.
class PartitionInput {
  public:
    /// Checks and describes the inputs of `arguments`, in the format they
    /// name or imply (see `CsvInput::open` and `TableInput::open`).
    /// @throws InvalidArgument, IoError or CorruptData naming what is wrong, as
    ///         those do; InvalidArgument if `--schema` is given for input that
    ///         is not CSV.
    PartitionInput(PartitionArguments const& arguments, Options const& options);
    /// Not copied or moved: its sources refer to it.
    PartitionInput(PartitionInput const&) = delete;
    PartitionInput& operator=(PartitionInput const&) = delete;

    [[nodiscard]] io::FileFormat format() const noexcept;
    [[nodiscard]] std::size_t files() const noexcept;
    /// The columns, in the first file's order.
    [[nodiscard]] table::Schema const& schema() const noexcept;
    /// The key columns: indices into `schema()`.
    [[nodiscard]] std::vector<std::size_t> const& keys() const noexcept;
    /// The CSV dialect of the input; for other formats, the one the options
    /// give (`--delimiter`, `--quote`, `--header`), for CSV output.
    [[nodiscard]] io::CsvOptions csv_options() const;
    /// The input files' sizes together.
    [[nodiscard]] std::uint64_t bytes() const noexcept;
    /// The most bytes of rows one piece holds as a table: the CSV block
    /// size, or the largest read of the files (see `TableInput`).
    [[nodiscard]] std::uint64_t piece_bytes() const noexcept;
    /// The most pieces the input is read in by `ranks` ranks together: each
    /// CSV file's blocks (for rows of up to a sixteenth of a block), each
    /// Parquet file's reads of at most `io::rows_per_read` rows, which end at
    /// row groups too, and each Arrow IPC file's record batches. An Arrow
    /// IPC stream, which does not say, counts as one read of each
    /// `io::rows_per_read` rows, or one.
    [[nodiscard]] std::uint64_t pieces(std::size_t ranks) const noexcept;
    /// What one file reader holds besides the tables it returns
    /// (`io::TableFileReader::held_bytes`, the most of the input's files).
    [[nodiscard]] std::uint64_t reader_bytes() const noexcept;
    /// Whether `--bad-rows skip` counts skipped CSV rows.
    [[nodiscard]] bool skips_bad_rows() const noexcept;

    /// What `progress` counts: bytes of CSV text, or rows of tables.
    [[nodiscard]] bool progress_in_bytes() const noexcept { return csv_input_.has_value(); }
    /// The `progress` of every piece of rank `rank` of `ranks` together.
    [[nodiscard]] std::uint64_t progress_total(std::size_t rank, std::size_t ranks) const;

    /// A source of the pieces that rank `rank` of `ranks` reads (every
    /// piece, with one rank): CSV and Arrow IPC files are dealt out whole
    /// (`file_share`), Parquet files by row group, in turn over all the
    /// files' row groups. The thread that pulls the source reads: CSV
    /// blocks, Arrow record batches, Parquet batches of a bounded number of
    /// rows (`io::ParquetRowGroups::reader`). The source refers to this
    /// input, which must outlive it.
    [[nodiscard]] std::function<std::optional<InputPiece>()> source(std::size_t rank, std::size_t ranks) const;

    /// The rows of `piece` as a table in `schema()`'s columns: a CSV block
    /// parsed (on the calling thread), a table as it is.
    /// @throws CorruptData naming the file and line if a CSV block does not parse.
    [[nodiscard]] InputTable to_table(InputPiece piece) const;

  private:
    std::optional<CsvInput> csv_input_;      ///< when the input is CSV
    std::optional<TableInput> table_input_;  ///< otherwise
    io::CsvOptions csv_output_;              ///< with `table_input_`: the dialect of CSV output
    std::vector<io::ParquetRowGroups> row_groups_;  ///< by file, for Parquet input

    /// The row groups of each Parquet file that rank `rank` of `ranks`
    /// reads, by file.
    [[nodiscard]] std::vector<std::vector<std::size_t>> row_group_share(std::size_t rank, std::size_t ranks) const;
};

}  // namespace spillway::cli
