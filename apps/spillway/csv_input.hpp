#pragma once
/// @file
/// The CSV files a job reads, checked before it starts: they exist, share a
/// dialect and a schema, and have the key columns asked for.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spillway/core/options.hpp>
#include <spillway/io/csv_options.hpp>
#include <spillway/io/csv_reader.hpp>
#include <spillway/table/schema.hpp>

namespace spillway::cli {

/// Input files of one dialect and one set of columns, and the key columns of
/// a job.
///
/// Files are matched by column name: each must have the first file's columns,
/// in any order. Rows are written in the first file's column order, under its
/// header line as it is in that file. Without a header, an empty file is a
/// file of no rows (as `partition` writes an empty partition), and "the
/// first file" is the first that is not empty.
///
/// Thread safety: a plain value; const member functions may be called
/// concurrently.
struct CsvInput {
    std::vector<std::filesystem::path> files;
    io::CsvOptions options;
    /// The first file's columns, with the types declared (`--schema`) or
    /// inferred from its first rows.
    table::Schema schema;
    std::vector<std::size_t> keys;  ///< indices into `schema`, distinct, in the order given
    /// Whether each column of `schema` had its type declared rather than inferred.
    std::vector<bool> declared;
    /// Per file, the field that holds each column of `schema`:
    /// `field_orders[f][j]` is the field of file `f` holding column `j`;
    /// empty where file `f` has the columns in `schema`'s order.
    std::vector<std::vector<std::size_t>> field_orders;
    /// The first file's header line as it is in the file, line break
    /// included; empty without a header.
    std::string header;
    std::uint64_t bytes = 0;  ///< the files' sizes together
    /// The rows the undeclared types were inferred from
    /// (`io::CsvReader::inferred_rows`), of `inferred_from`.
    std::size_t inferred_rows = 0;
    /// The first file that has rows (the first file that is not empty, where
    /// none has).
    std::filesystem::path inferred_from;

    /// Checks and describes `files`. The dialect starts from TPC-H `.tbl`
    /// (`CsvOptions::tbl()`) when the first file's name ends in `.tbl`, from
    /// the CSV defaults otherwise, and the `csv_*` options in `options`
    /// apply on top. The schema is inferred from the first file that has
    /// rows (see `io::CsvReader`), in the first file's column order, except
    /// for the columns whose types `declared`
    /// gives as `name:type` entries. Each key is a column name, or a column
    /// number from 0 (so headerless files can name their columns either
    /// `column3` or `3`).
    /// @throws InvalidArgument if there is no file, a file does not exist, is
    ///         not a regular file, or is empty where files have a header;
    ///         every file is empty; a key is empty, repeated or not
    ///         a column (the message lists the columns); a declared type is
    ///         malformed or names no column; an option is malformed.
    /// @throws IoError naming a file that cannot be read.
    /// @throws CorruptData naming the file and the column if a file's columns
    ///         are not the first file's, or naming the line if the quoting of
    ///         the rows read to infer types is malformed.
    [[nodiscard]] static CsvInput open(std::vector<std::filesystem::path> files,
                                       std::vector<std::string> const& keys, Options const& options,
                                       std::vector<std::string> const& declared = {});

    /// The columns of file `file` in its own order, with `schema`'s types.
    [[nodiscard]] table::Schema file_schema(std::size_t file) const;
    /// Whether each column of `file_schema(file)` had its type inferred
    /// rather than declared.
    [[nodiscard]] std::vector<bool> file_inferred(std::size_t file) const;
    /// The fields of file `file` that hold the key columns, in key order.
    [[nodiscard]] std::vector<std::size_t> file_keys(std::size_t file) const;
    /// The rows of a block of file `file`: its key columns, and each row's
    /// text in the first file's column order.
    /// @throws CorruptData as `io::CsvBlock::parse_columns` does; for a
    ///         value that does not parse as its inferred type, the message
    ///         names the flags that fix it.
    [[nodiscard]] io::CsvRows parse_keys(std::size_t file, io::CsvBlock const& block) const;
    /// Every column of a block of file `file`, in `schema`'s order, as
    /// `parse_keys` parses the keys.
    [[nodiscard]] io::CsvRows parse_all(std::size_t file, io::CsvBlock const& block) const;

  private:
    /// The fields `fields` of a block of file `file`, each row's text in the
    /// first file's column order if `reorder`; a value that does not parse as
    /// its inferred type names the flags that fix it.
    [[nodiscard]] io::CsvRows parse(std::size_t file, io::CsvBlock const& block,
                                       std::vector<std::size_t> const& fields, bool reorder) const;
};

/// One block of whole rows and the index of the file it came from.
struct FileBlock {
    std::size_t file;
    io::CsvBlock block;
};

/// Reads `files` one after the other, a block at a time, each with the same
/// options and its own schema: a generator function for `seq_join`.
///
/// Thread safety: externally synchronized (seq_join pulls from one thread at
/// a time). Holds one open reader at a time.
class CsvBlockSource {
  public:
    /// A source of the blocks of `files`, read with `options`, file `f` with
    /// `schemas[f]`, of whose columns `inferred[f]` marks those whose types
    /// were inferred (see `io::CsvReader`). Requires: one schema and one
    /// `inferred` per file.
    CsvBlockSource(std::vector<std::filesystem::path> files, io::CsvOptions options,
                   std::vector<table::Schema> schemas, std::vector<std::vector<bool>> inferred);
    /// A source of the blocks of `input`'s files.
    explicit CsvBlockSource(CsvInput const& input);
    /// A source of the blocks of `input`'s files `files` (indices into
    /// `input.files`), in that order; each block names its file by its index
    /// in `input.files`.
    CsvBlockSource(CsvInput const& input, std::vector<std::size_t> const& files);

    /// The next block, or nothing after the last file's last block.
    /// @throws IoError / CorruptData as `io::CsvReader` does.
    std::optional<FileBlock> operator()();

  private:
    std::vector<std::filesystem::path> files_;
    io::CsvOptions options_;
    std::vector<table::Schema> schemas_;
    std::vector<std::vector<bool>> inferred_;
    std::vector<std::size_t> indices_;  ///< what each of `files_` is called in the blocks
    std::size_t next_file_ = 0;                  ///< the file after the one `reader_` reads
    std::unique_ptr<io::CsvReader> reader_;  ///< the file being read; null between files
};

}  // namespace spillway::cli
