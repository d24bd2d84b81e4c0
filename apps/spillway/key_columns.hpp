#pragma once
/// @file
/// The key columns a user names, resolved against a schema.

#include <cstddef>
#include <string>
#include <vector>

#include <spillway/table/schema.hpp>

namespace spillway::cli {

/// The indices into `schema` of the columns `keys` name: each a column name,
/// or else a column number from 0 (so headerless files can name their
/// columns either `column3` or `3`), in the order given.
/// @throws InvalidArgument if `keys` is empty, or a key is empty, repeated or
///         not a column (the message lists the columns).
[[nodiscard]] std::vector<std::size_t> resolve_keys(table::Schema const& schema, std::vector<std::string> const& keys);

}  // namespace spillway::cli
