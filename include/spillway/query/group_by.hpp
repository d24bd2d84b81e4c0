#pragma once
/// @file
/// Grouped aggregation: the rows of a table grouped by key columns, with
/// sums, counts, minima and maxima per group, in two phases when the rows
/// come in chunks.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <spillway/table/table.hpp>

namespace spillway::query {

/// What an aggregate computes over the non-null values of a group.
///
/// | kind    | of                            | result                              |
/// |---------|-------------------------------|-------------------------------------|
/// | `sum`   | `int32`, `int64`              | `int64`; null if no value           |
/// | `sum`   | `float64`                     | `float64`; null if no value         |
/// | `count` | any column, or every row      | `int64`, never null                 |
/// | `min`   | any type                      | the same type; null if no value     |
/// | `max`   | any type                      | the same type; null if no value     |
///
/// Strings order by their bytes; `float64` NaN is above every number.
enum class AggregateKind : std::uint8_t { sum, count, min, max };

/// One output column of `group_by`: `kind` of the column named `column`,
/// named `name`. A `count` with an empty `column` counts the group's rows.
struct Aggregate {
    AggregateKind kind;
    std::string column;
    std::string name;
};

/// One row per distinct key of `table`'s columns named `keys`, in the order
/// each key first appears: the key columns, then one column per aggregate.
/// Null keys form a group of their own (as SQL's GROUP BY does). Without
/// keys, the whole table is one group, and the result has one row even
/// when the table has none (a count of 0, null sums, minima and maxima);
/// without keys or aggregates it has no columns, and so no rows.
///
/// Two phases: apply `group_by(chunk, keys, aggregates)` to each chunk of
/// rows, then `group_by(concatenated partial results, keys,
/// merging_aggregates(aggregates))` gives what one `group_by` over all the
/// rows gives, up to the order of the groups and `float64` rounding.
/// Its working storage (up to 20 bytes a row and a table of the groups) is charged
/// to the calling thread's HOST resource (`memory::ScopedHostResource`).
/// @throws InvalidArgument if a name is not a column of `table`, an
///         aggregate's kind does not apply to its column's type, the output
///         names repeat, or an `int64` sum overflows.
[[nodiscard]] table::Table group_by(
    table::Table const& table, std::span<std::string const> keys, std::span<Aggregate const> aggregates
);

/// The aggregates that combine partial results of `aggregates` (each named
/// as its partial column): sums and counts are summed, minima and maxima
/// taken again.
[[nodiscard]] std::vector<Aggregate> merging_aggregates(std::span<Aggregate const> aggregates);

}  // namespace spillway::query
