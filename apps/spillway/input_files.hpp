#pragma once
/// @file
/// The input files a user names: shell-style patterns expanded, each checked.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <spillway/table/schema.hpp>

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

/// Where each column of `first`, the columns of the first input file
/// `first_file`, is among `names`, the columns of the input file `file`:
/// `order[j]` is the column of `file` named as column `j` of `first`; empty
/// if `names` are `first`'s names in its order.
/// Requires: `names` are distinct, as a schema's are.
/// @throws CorruptData naming both files and a column if the two files do
///         not have the same columns (in any order).
[[nodiscard]] std::vector<std::size_t> match_column_names(
    table::Schema const& first, std::filesystem::path const& first_file, std::vector<std::string> const& names,
    std::filesystem::path const& file
);

/// The indices of the files that rank `rank` of `ranks` reads, of `files`
/// input files dealt out in turn: `rank`, `rank + ranks`, ...; with one
/// rank, every file.
[[nodiscard]] std::vector<std::size_t> file_share(std::size_t files, std::size_t rank, std::size_t ranks);

}  // namespace spillway::cli
