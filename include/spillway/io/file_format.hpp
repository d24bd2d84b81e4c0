#pragma once
/// @file
/// The file formats spillway reads and writes tables in.

#include <filesystem>
#include <string_view>

namespace spillway::io {

/// A file format of tables.
///
/// | format    | files                                  | library                     |
/// |-----------|----------------------------------------|-----------------------------|
/// | `csv`     | CSV, and TPC-H `.tbl`                  | spillway's own (`io/`)      |
/// | `parquet` | Apache Parquet                         | Apache Arrow C++ (Parquet)  |
/// | `arrow`   | Arrow IPC files (Feather version 2)    | Apache Arrow C++            |
enum class FileFormat : unsigned char { csv, parquet, arrow };

/// The lower-case name of `format`: `csv`, `parquet` or `arrow`.
[[nodiscard]] std::string_view to_string(FileFormat format) noexcept;

/// Parses a name written by `to_string` (case-insensitive); `feather` is
/// `arrow`.
/// @throws InvalidArgument naming the formats otherwise.
[[nodiscard]] FileFormat parse_file_format(std::string_view name);

/// The format a file's name implies: `.parquet` and `.pq` are Parquet,
/// `.arrow`, `.feather`, `.ipc` and `.arrows` (a stream) Arrow IPC,
/// anything else CSV.
[[nodiscard]] FileFormat format_of(std::filesystem::path const& path);

/// Whether a file's name ends in `.tbl`, in any case: TPC-H's dialect of
/// CSV (`CsvOptions::tbl`).
[[nodiscard]] bool is_tbl(std::filesystem::path const& path);

/// Whether a file's name ends in the extension of a compressed stream
/// (`.gz`, `.bz2`, `.xz`, `.zst`, `.lz4`, `.zip`, in any case), which
/// spillway neither reads nor writes as such.
[[nodiscard]] bool names_compressed_file(std::filesystem::path const& path);

/// The file name extension spillway gives files of `format`: `.csv`,
/// `.parquet` or `.arrow`.
[[nodiscard]] std::string_view extension_of(FileFormat format) noexcept;

}  // namespace spillway::io
