#pragma once
/// @file
/// Ordering the rows of a table: a full sort, and the first k rows of one.
#include <cstddef>
#include <span>
#include <string>

#include <spillway/table/table.hpp>

namespace spillway::query {

/// One column of a sort order. Values order as numbers, dates or byte
/// strings; `float64` NaN is above every number. Nulls come last in either
/// direction.
struct SortKey {
    std::string column;
    bool descending = false;
};

/// The rows of `table` ordered by `keys`, the first key first; rows with
/// equal keys keep their order (a stable sort). O(n log n).
/// @throws InvalidArgument if `keys` is empty or names a column the table
///         does not have.
[[nodiscard]] table::Table sort(table::Table const& table, std::span<SortKey const> keys);

/// The first `k` rows of `sort(table, keys)` (all of them if the table has
/// fewer), in O(n log k). Top-k of chunks: the top `k` of the concatenated
/// top `k` of each chunk are the top `k` of all the rows.
/// @throws InvalidArgument as `sort`.
[[nodiscard]] table::Table top_k(table::Table const& table, std::span<SortKey const> keys, std::size_t k);

}  // namespace spillway::query
