#pragma once
/// @file
/// A Parquet file read row group by row group, in any order, so that the
/// ranks or workers of a job can share its row groups out.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

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

  private:
    /// Row group `group`'s columns of the file's indices `columns` (all if empty).
    [[nodiscard]] table::Table read_columns(std::size_t group, std::vector<int> const& columns) const;

    std::filesystem::path path_;
    std::shared_ptr<detail::ParquetFooter const> footer_;  ///< the parsed footer, shared by every read
    std::size_t row_groups_ = 0;
    table::Schema schema_;
};

}  // namespace spillway::io
