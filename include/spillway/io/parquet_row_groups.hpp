#pragma once
/// @file
/// A Parquet file read row group by row group, in any order, so that the
/// ranks or workers of a job can share its row groups out.
#include <cstddef>
#include <filesystem>

#include <spillway/table/schema.hpp>
#include <spillway/table/table.hpp>

namespace spillway::io {

/// The row groups of one Parquet file: their number, the columns (read as
/// `TableFileReader` reads them), and each row group as one table.
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

  private:
    std::filesystem::path path_;
    std::size_t row_groups_ = 0;
    table::Schema schema_;
};

}  // namespace spillway::io
