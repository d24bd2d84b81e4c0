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
#include <spillway/table/csv_options.hpp>
#include <spillway/table/csv_reader.hpp>
#include <spillway/table/schema.hpp>

namespace spillway::cli {

/// Input files of one dialect and schema, and the key columns of a job.
///
/// Thread safety: a plain value; const member functions may be called
/// concurrently.
struct CsvInput {
    std::vector<std::filesystem::path> files;
    table::CsvOptions options;
    table::Schema schema;
    std::vector<std::size_t> keys;  ///< indices into `schema`, distinct, in the order given
    std::uint64_t bytes = 0;        ///< the files' sizes together

    /// Checks and describes `files`. The dialect starts from TPC-H `.tbl`
    /// (`CsvOptions::tbl()`) when the first file's name ends in `.tbl`, from
    /// the CSV defaults otherwise, and the `csv_*` options in `options`
    /// apply on top. The schema is inferred from the first file (see
    /// `table::CsvReader`); every file is opened with it, which checks its
    /// header. Each key is a column name, or a column number from 0 (so
    /// headerless files can name their columns either `column3` or `3`).
    /// @throws InvalidArgument if there is no file, a file does not exist or
    ///         is not a regular file, a key is empty, repeated or not a column
    ///         (the message lists the columns), or an option is malformed.
    /// @throws IoError naming a file that cannot be read.
    /// @throws CorruptData naming the file and line if a header does not
    ///         match the first file's, or the rows read to infer types are
    ///         malformed.
    [[nodiscard]] static CsvInput open(std::vector<std::filesystem::path> files,
                                       std::vector<std::string> const& keys, Options const& options);
};

/// One block of whole rows and the index of the file it came from.
struct FileBlock {
    std::size_t file;
    table::CsvBlock block;
};

/// Reads `files` one after the other, a block at a time, each with the same
/// options and schema: a generator function for `seq_join`.
///
/// Thread safety: externally synchronized (seq_join pulls from one thread at
/// a time). Holds one open reader at a time.
class CsvBlockSource {
  public:
    /// A source of the blocks of `files`, read with `options` and `schema`.
    CsvBlockSource(std::vector<std::filesystem::path> files, table::CsvOptions options, table::Schema schema);

    /// The next block, or nothing after the last file's last block.
    /// @throws IoError / CorruptData as `table::CsvReader` does.
    std::optional<FileBlock> operator()();

  private:
    std::vector<std::filesystem::path> files_;
    table::CsvOptions options_;
    table::Schema schema_;
    std::size_t next_file_ = 0;                  ///< the file after the one `reader_` reads
    std::unique_ptr<table::CsvReader> reader_;  ///< the file being read; null between files
};

}  // namespace spillway::cli
