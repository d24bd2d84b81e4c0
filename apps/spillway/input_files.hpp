#pragma once
/// @file
/// The input files a user names, with shell-style patterns expanded.

#include <filesystem>
#include <vector>

namespace spillway::cli {

/// `inputs` with each name that holds a pattern (`*`, `?` or `[`) replaced
/// by the files it matches, in sorted order, as a shell would; other names
/// are kept as they are.
/// @throws InvalidArgument naming the pattern if it matches nothing.
[[nodiscard]] std::vector<std::filesystem::path> expand_inputs(std::vector<std::filesystem::path> const& inputs);

}  // namespace spillway::cli
