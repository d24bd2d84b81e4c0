#pragma once
/// @file
/// The files of `spillway partition`: their names, and how many may be open.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace spillway::cli {

/// `directory/part-NNNNN<extension>`: the file of partition `partition`
/// (five digits at least).
[[nodiscard]] std::filesystem::path partition_file(std::filesystem::path const& directory, std::uint32_t partition,
                                                   std::string_view extension);

/// The extension of CSV partition files written from the CSV file `input`:
/// its own (`.tbl`, `.txt`), or `.csv` where it has none or one that names
/// another format or a compressed stream (`.parquet`, `.gz`), which the
/// files are not.
[[nodiscard]] std::string csv_partition_extension(std::filesystem::path const& input);

/// @throws InvalidArgument naming the largest count that works if this
///         process may not keep `partitions` files open at once (plus a
///         margin for its other descriptors).
void check_open_file_limit(std::uint32_t partitions);

}  // namespace spillway::cli
