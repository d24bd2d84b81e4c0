#pragma once
/// @file
/// The readers and writers of each file format, behind `open_table_file`
/// and `create_table_file`.

#include <filesystem>
#include <memory>
#include <optional>

#include <spillway/io/table_file.hpp>

namespace spillway::io::detail {

[[nodiscard]] std::unique_ptr<TableFileReader> open_csv_file(std::filesystem::path const& path,
                                                             io::CsvOptions const& csv,
                                                             std::optional<table::Schema> schema);
[[nodiscard]] std::unique_ptr<TableFileWriter> create_csv_file(std::filesystem::path const& path,
                                                               table::Schema const& schema,
                                                               WriteOptions const& options);

[[nodiscard]] std::unique_ptr<TableFileReader> open_parquet_file(std::filesystem::path const& path);
[[nodiscard]] std::unique_ptr<TableFileWriter> create_parquet_file(std::filesystem::path const& path,
                                                                   table::Schema const& schema,
                                                                   WriteOptions const& options);

[[nodiscard]] std::unique_ptr<TableFileReader> open_arrow_file(std::filesystem::path const& path);
[[nodiscard]] std::unique_ptr<TableFileWriter> create_arrow_file(std::filesystem::path const& path,
                                                                 table::Schema const& schema,
                                                                 WriteOptions const& options);

/// @throws InvalidArgument unless `table` has `schema`, or if `closed`.
void check_writable(table::Table const& table, table::Schema const& schema, bool closed,
                    std::filesystem::path const& path);

}  // namespace spillway::io::detail
