#pragma once
/// @file
/// The settings every form of `spillway partition` reports in its summary.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spillway/io/file_format.hpp>

namespace spillway::cli {

/// What a `partition` run was asked to do, as its summary reports it.
struct PartitionSettings {
    std::size_t inputs = 0;  ///< input files
    io::FileFormat input_format = io::FileFormat::csv;
    io::FileFormat output_format = io::FileFormat::csv;
    std::string compression;  ///< of Parquet and Arrow output; not reported for CSV
    std::vector<std::string> keys;
    std::size_t partitions = 0;
    std::filesystem::path output;
    std::size_t threads = 0;

    /// Adds `inputs`, `input_format`, `output_format`, `compression` (unless
    /// the output is CSV), `keys`, `partitions`, `output` and `threads` to
    /// `settings`, in that order.
    void describe(nlohmann::ordered_json& settings) const;
};

/// @throws InvalidArgument naming `--compression` if files of `format` cannot
///         be written with `compression` (`io::check_compression`).
void check_compression(io::FileFormat format, std::string const& compression);

}  // namespace spillway::cli
