#pragma once
/// @file
/// The input files a user names: shell-style patterns expanded, each checked.

#include <cstdint>
#include <filesystem>
#include <vector>

namespace spillway::cli {

/// `inputs` with each name that holds a pattern (`*`, `?` or `[`) replaced
/// by the files it matches, in sorted order, as a shell would; other names
/// are kept as they are.
/// @throws InvalidArgument naming the pattern if it matches nothing.
[[nodiscard]] std::vector<std::filesystem::path> expand_inputs(std::vector<std::filesystem::path> const& inputs);

/// The size of the input file `file`.
/// @throws InvalidArgument naming it if it does not exist or is not a
///         regular file.
[[nodiscard]] std::uint64_t input_file_size(std::filesystem::path const& file);

}  // namespace spillway::cli
