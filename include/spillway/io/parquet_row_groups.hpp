#pragma once
/// @file
/// A Parquet file read row group by row group, in any order, so that the
/// ranks or workers of a job can share its row groups out.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <spillway/io/table_file.hpp>
#include <spillway/table/schema.hpp>
#include <spillway/table/table.hpp>

namespace spillway::io {

namespace detail {
struct ParquetFooter;
}

/// The row groups of one Parquet file: their number, the columns (read as
/// `TableFileReader` reads them), and each row group as one table, of all
/// its columns or of those asked for (the others are not read at all).
///
/// The footer is read once, when the file is opened; `read` opens the file
/// again but does not parse the footer again.
///
/// Thread safety: `read` may be called concurrently; each call reads the
/// file through a reader of its own.
class ParquetRowGroups {
  public:
    /// Opens `path` and reads its footer.
    /// @throws IoError naming the path if it cannot be opened.
    /// @throws CorruptData naming the path if it is not a Parquet file.
    /// @throws InvalidArgument naming the column if a column's type cannot be read.
    explicit ParquetRowGroups(std::filesystem::path path);

    /// The number of row groups.
    [[nodiscard]] std::size_t size() const noexcept { return row_groups_; }

    /// The rows of row group `group`, as the footer says.
    /// @throws InvalidArgument if `group >= size()`.
    [[nodiscard]] std::uint64_t rows(std::size_t group) const;
    /// The columns of the file.
    [[nodiscard]] table::Schema const& schema() const noexcept { return schema_; }

    /// Row group `group`, whole.
    /// @throws InvalidArgument if `group >= size()`.
    /// @throws IoError / CorruptData naming the file if reading fails.
    [[nodiscard]] table::Table read(std::size_t group) const;

    /// The columns named `columns` of row group `group`, in the file's order;
    /// none asked for gives a table without columns.
    /// @throws InvalidArgument if `group >= size()` or a name is not a
    ///         column of the file (naming the columns there are).
    /// @throws IoError / CorruptData naming the file if reading fails.
    [[nodiscard]] table::Table read(std::size_t group, std::span<std::string const> columns) const;

    /// A reader of row groups `groups`, in that order, that reads them as
    /// `open_table_file` reads a whole file: in batches of a bounded number
    /// of rows, decoding pages as the batch needs them.
    /// @throws InvalidArgument if a group is not below `size()`.
    /// @throws IoError naming the file if it cannot be opened.
    [[nodiscard]] std::unique_ptr<TableFileReader> reader(std::vector<std::size_t> const& groups) const;

  private:
    /// @throws InvalidArgument naming the file unless `group < size()`.
    void check_group(std::size_t group) const;
    /// Row group `group`'s columns of the file's indices `columns` (all if empty).
    [[nodiscard]] table::Table read_columns(std::size_t group, std::vector<int> const& columns) const;

    std::filesystem::path path_;
    std::shared_ptr<detail::ParquetFooter const> footer_;  ///< the parsed footer, shared by every read
    std::size_t row_groups_ = 0;
    table::Schema schema_;
};

}  // namespace spillway::io
