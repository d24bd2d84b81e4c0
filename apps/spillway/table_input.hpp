#pragma once
/// @file
/// Parquet or Arrow IPC files a job reads, checked before it starts: they
/// open, and have the first file's columns (by name, of the same types, or
/// of int32 in some files and int64 in others).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spillway/io/table_file.hpp>
#include <spillway/table/schema.hpp>
#include <spillway/table/table.hpp>

namespace spillway::cli {

/// Input files of one format and one set of columns, and the key columns of
/// a job. Files are matched by column name: each must have the first file's
/// columns, of the same types, in any order; tables come out in the first
/// file's column order. A column of int32 in some files and int64 in others
/// (a schema that grew) is int64: its int32 values are widened as they are
/// read.
///
/// Thread safety: a plain value; const member functions may be called
/// concurrently.
struct TableInput {
    std::vector<std::filesystem::path> files;
    io::FileFormat format = io::FileFormat::parquet;
    table::Schema schema;           ///< the first file's columns, int32 ones widened where another file has int64
    std::vector<std::size_t> keys;  ///< indices into `schema`, distinct, in the order given
    /// Per file, the columns of file `f` that make `schema`:
    /// `column_orders[f][j]` is the column of file `f` named as column `j`;
    /// empty where file `f` has the columns of `schema` in that order.
    std::vector<std::vector<std::size_t>> column_orders;
    /// Per file, the columns of `schema` that file holds as int32 where
    /// `schema` has int64.
    std::vector<std::vector<std::size_t>> widened_columns;
    std::uint64_t bytes = 0;               ///< the files' sizes together
    std::uint64_t rows = 0;                ///< the files' rows together
    std::vector<std::uint64_t> file_rows;  ///< by file, its rows (0 where the file does not say)
    std::vector<std::optional<std::uint64_t>> file_reads;  ///< by file, its reads where it says (`reads`)
    /// The most column data one read returns, as the files tell, with the
    /// int32 columns read as int64 at their width.
    std::uint64_t largest_read_bytes = 0;
    std::uint64_t reader_bytes = 0;        ///< the most a file's reader holds besides its tables (`held_bytes`)

    /// Checks and describes `files`, all of `format` (not CSV). Each key is
    /// a column name or number (see `resolve_keys`).
    /// @throws InvalidArgument if there is no file, a file does not exist or
    ///         is not a regular file, a key is not a column, or a column's type
    ///         cannot be read.
    /// @throws IoError naming a file that cannot be read.
    /// @throws CorruptData naming the file if it is not of `format`, or naming
    ///         the file and the column if its columns are not the first file's
    ///         (by name, and of the same type but for int32 and int64).
    [[nodiscard]] static TableInput open(std::vector<std::filesystem::path> files,
                                         std::vector<std::string> const& keys, io::FileFormat format);
};

/// One table of rows of input file `file`, in the columns of its input's schema.
struct FileTable {
    std::size_t file;
    table::Table table;
};

/// Reads files one after the other, a table at a time (a row group or a
/// record batch), each with its columns put in one order and int32 ones
/// widened as the input's schema says: a generator function for `seq_join`.
///
/// Thread safety: externally synchronized. Holds one open reader at a time.
class TableSource {
  public:
    /// Opens file `f` of the input (an index into `TableInput::files`) for reading.
    using Opener = std::function<std::unique_ptr<io::TableFileReader>(std::size_t file)>;

    /// A source of the tables of `input`'s files `files` (indices into
    /// `input.files`), in that order, each opened by `open` (by default
    /// whole, with `io::open_table_file`); each table names its file by its
    /// index in `input.files`.
    TableSource(TableInput const& input, std::vector<std::size_t> files, Opener open = {});

    /// The next table, or nothing after the last file's last.
    /// @throws IoError / CorruptData naming the file if reading fails.
    std::optional<FileTable> operator()();

  private:
    TableInput const& input_;
    std::vector<std::size_t> files_;                  ///< indices into `input_.files`
    Opener open_;
    std::size_t next_file_ = 0;                       ///< the entry of `files_` after the one `reader_` reads
    std::unique_ptr<io::TableFileReader> reader_;  ///< the file being read; null between files
};

}  // namespace spillway::cli
