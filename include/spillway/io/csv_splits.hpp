#pragma once
/// @file
/// A CSV file without quoting (TPC-H's `.tbl`) cut at line breaks into
/// splits that are read in any order, so that the ranks or workers of a job
/// can share a file's rows out, as `ParquetRowGroups` shares row groups.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <spillway/io/csv_options.hpp>
#include <spillway/table/schema.hpp>
#include <spillway/table/table.hpp>

namespace spillway::io {
namespace detail {
struct CsvSource;
}

/// The rows of one CSV file, of a dialect whose fields are never quoted (so
/// that every line break ends a row) and without a header, in splits of
/// whole rows of about `split_bytes` each, parsed as a given schema.
///
/// Opening reads the file once, to find where each split starts and on
/// which line (for messages); `read` then reads one split with `pread`.
///
/// Thread safety: const member functions may be called concurrently.
class CsvSplits {
  public:
    /// Opens `path` and finds its splits: the first starts at the file's
    /// start, each next one at the first row to start `split_bytes` or more
    /// after the one before.
    /// @throws InvalidArgument if the options are invalid, quote fields or
    ///         have a header, or `split_bytes` is 0.
    /// @throws IoError naming the path if it cannot be opened or read.
    CsvSplits(std::filesystem::path path, CsvOptions options, table::Schema schema, std::uint64_t split_bytes);

    /// The number of splits: 0 for an empty file.
    [[nodiscard]] std::size_t size() const noexcept { return starts_.size(); }

    /// The columns of the file.
    [[nodiscard]] table::Schema const& schema() const noexcept;

    /// The columns named `columns` of the rows of split `split`, in the
    /// schema's order; none asked for gives a table without columns. Every
    /// row's number of fields is checked, and the values of the columns
    /// asked for.
    /// @throws InvalidArgument if `split >= size()` or a name is not a
    ///         column (naming the columns there are).
    /// @throws IoError naming the file if reading fails.
    /// @throws CorruptData (or `CsvValueError`) naming the file and line as
    ///         `CsvBlock::parse_columns` does.
    [[nodiscard]] table::Table read(std::size_t split, std::span<std::string const> columns) const;

  private:
    /// Where a split starts in the file, and the line number there.
    struct Start {
        std::uint64_t offset;
        std::uint64_t line;
    };

    std::shared_ptr<detail::CsvSource const> source_;  ///< the path, options and schema every split shares
    std::vector<Start> starts_;
    std::uint64_t file_bytes_ = 0;
};

}  // namespace spillway::io
