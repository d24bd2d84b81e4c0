#include <spillway/query/group_by.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/memory/host_allocator.hpp>
#include <spillway/table/column_builder.hpp>
#include <spillway/table/row_hash.hpp>
#include <spillway/table/schema.hpp>

#include "query/key_comparison.hpp"

namespace spillway::query {
namespace {

constexpr std::uint32_t no_group = UINT32_MAX;

/// A vector charged to the calling thread's HOST resource.
template <typename T>
using ChargedVector = std::vector<T, memory::HostAllocator<T>>;

/// The group of every row, and the first row of every group.
struct Groups {
    ChargedVector<std::uint32_t> of_row;   ///< per row: its group, numbered by first appearance
    std::vector<std::uint32_t> first_row;  ///< per group: the first row holding its key
    std::size_t count = 0;                 ///< the number of groups
};

/// The keys of every row of `table`'s `keys` columns as one integer, equal
/// exactly where the keys are equal, where they fit in 8 bytes: columns
/// without nulls, each an int64 or a timestamp (alone), an int32 or a
/// date32 (4 bytes), a boolean (1 byte), or a string of at most 7 bytes (its length, then its bytes, in as many
/// bytes as the column's longest value needs). Nothing otherwise.
std::optional<ChargedVector<std::uint64_t>> packed_keys(table::Table const& table,
                                                        std::vector<std::size_t> const& keys) {
    std::vector<std::size_t> widths;
    std::size_t packed_width = 0;
    for (auto const index : keys) {
        auto const& column = table.column(index);
        if (column.null_count() != 0 || column.type() == table::DataType::float64) {
            return std::nullopt;
        }
        std::size_t width = table::data_width(column.type());
        if (column.type() == table::DataType::string) {
            auto const offsets = column.offsets();
            std::int32_t longest = 0;
            for (std::size_t row = 0; row < column.size(); ++row) {
                longest = std::max(longest, offsets[row + 1] - offsets[row]);
            }
            if (longest > 7) {
                return std::nullopt;
            }
            width = 1 + static_cast<std::size_t>(longest);
        }
        packed_width += width;
        if (packed_width > 8) {
            return std::nullopt;
        }
        widths.push_back(width);
    }
    ChargedVector<std::uint64_t> packed(table.num_rows(), 0);
    std::size_t shift = 0;
    for (std::size_t key = 0; key < keys.size(); ++key) {
        auto const& column = table.column(keys[key]);
        table::visit_stored_type(column.type(), [&]<typename Stored>(Stored) {
            if constexpr (std::is_integral_v<Stored>) {
                // Its bits, unsigned; a key of 8 bytes is alone, at shift 0.
                auto const values = column.values<Stored>();
                for (std::size_t row = 0; row < packed.size(); ++row) {
                    packed[row] |= std::uint64_t{static_cast<std::make_unsigned_t<Stored>>(values[row])} << shift;
                }
            } else if constexpr (std::is_same_v<Stored, std::string_view>) {
                auto const offsets = column.offsets();
                auto const characters = column.characters();
                // A value's 8 bytes are loaded at once and cut to its
                // length, where the column's characters go on that far.
                auto const loaded_whole = static_cast<std::int64_t>(characters.size()) - 8;
                for (std::size_t row = 0; row < packed.size(); ++row) {
                    auto const start = offsets[row];
                    auto const length = static_cast<std::uint64_t>(offsets[row + 1] - start);
                    std::uint64_t bytes = 0;
                    if (start <= loaded_whole) {
                        std::memcpy(&bytes, characters.data() + start, sizeof bytes);
                        bytes &= (std::uint64_t{1} << (8 * length)) - 1;
                    } else if (length != 0) {
                        std::memcpy(&bytes, characters.data() + start, length);
                    }
                    packed[row] |= (length | bytes << 8) << shift;
                }
            }  // float64 is never packed
        });
        shift += 8 * widths[key];
    }
    return packed;
}

/// Numbers the distinct keys of `table`'s `keys` columns in the order they
/// first appear, through an open-addressing table of group numbers. Keys
/// that pack into one integer (`packed_keys`) are hashed and compared as
/// that integer.
Groups assign_groups(table::Table const& table, std::vector<std::size_t> const& keys) {
    auto const rows = table.num_rows();
    Groups groups;
    groups.of_row.assign(rows, 0);
    if (keys.empty()) {
        groups.count = 1;
        return groups;
    }
    ChargedVector<std::uint64_t> group_hashes;
    ChargedVector<std::uint32_t> slots(16, no_group);
    auto const grow = [&] {
        slots.assign(2 * slots.size(), no_group);
        auto const mask = slots.size() - 1;
        for (std::uint32_t group = 0; group < group_hashes.size(); ++group) {
            auto slot = group_hashes[group] & mask;
            while (slots[slot] != no_group) {
                slot = (slot + 1) & mask;
            }
            slots[slot] = group;
        }
    };
    // Each row's group: the one whose first row has its key by `same_keys`,
    // or a new one in the empty slot the search ends at.
    auto const assign = [&](auto const& hashes, auto same_keys) {
        for (std::size_t row = 0; row < rows; ++row) {
            auto const hash = hashes[row];
            auto const mask = slots.size() - 1;
            for (auto slot = hash & mask;; slot = (slot + 1) & mask) {
                auto const group = slots[slot];
                if (group == no_group) {
                    auto const added = static_cast<std::uint32_t>(group_hashes.size());
                    groups.first_row.push_back(static_cast<std::uint32_t>(row));
                    group_hashes.push_back(hash);
                    slots[slot] = added;
                    if (2 * group_hashes.size() > slots.size()) {
                        grow();
                    }
                    groups.of_row[row] = added;
                    break;
                }
                if (group_hashes[group] == hash && same_keys(row, groups.first_row[group])) {
                    groups.of_row[row] = group;
                    break;
                }
            }
        }
    };
    if (auto packed = packed_keys(table, keys)) {
        auto const& values = *packed;
        ChargedVector<std::uint64_t> hashes(rows);
        std::transform(values.begin(), values.end(), hashes.begin(), detail::mix);
        assign(hashes, [&values](std::size_t row, std::size_t other) { return values[row] == values[other]; });
    } else {
        detail::KeyColumns const key_columns(table, keys);
        assign(table::hash_rows_charged(table, keys),
               [&](std::size_t row, std::size_t other) { return key_columns.equal(row, key_columns, other); });
    }
    groups.count = group_hashes.size();
    return groups;
}

/// A function of a row of `column` giving its value as `T` stores it (a
/// `string_view` for strings). Requires: `column` stores `T`.
template <typename T>
auto values_of(table::Column const& column) {
    if constexpr (std::is_same_v<T, std::string_view>) {
        return [offsets = column.offsets().data(), characters = column.characters().data()](std::size_t row) {
            return T(characters + offsets[row], static_cast<std::size_t>(offsets[row + 1] - offsets[row]));
        };
    } else {
        return [values = column.values<T>().data()](std::size_t row) { return values[row]; };
    }
}

/// One `output`-typed value per group folded from the non-null values of
/// `column` (read as `In`, accumulated as `Accumulator`): the first value
/// of a group starts it, `combine(accumulated, value)` adds each other.
/// Groups without a value are null.
template <typename In, typename Accumulator, typename Combine>
table::Column fold(table::Column const& column, Groups const& groups, table::DataType output, Combine combine) {
    std::vector<Accumulator> accumulated(groups.count);
    std::vector<std::uint8_t> seen(groups.count, 0);
    auto const value_at = values_of<In>(column);
    for (std::size_t row = 0; row < column.size(); ++row) {
        if (column.is_null(row)) {
            continue;
        }
        auto const group = groups.of_row[row];
        auto const value = value_at(row);
        if (seen[group] == 0) {
            accumulated[group] = Accumulator(value);
            seen[group] = 1;
        } else {
            accumulated[group] = combine(std::move(accumulated[group]), value);
        }
    }
    table::ColumnBuilder builder(output);
    builder.reserve(groups.count);
    for (std::size_t group = 0; group < groups.count; ++group) {
        if (seen[group] == 0) {
            builder.append_null();
        } else if constexpr (std::is_same_v<Accumulator, std::string>) {
            builder.append(std::string_view(accumulated[group]));
        } else {
            builder.append(Accumulator(accumulated[group]));  // a bool, not std::vector<bool>'s proxy
        }
    }
    return builder.finish();
}

/// `fold` for a sum of `column` when it has rows and no nulls: every group
/// has a row, so each sum starts at `zero`, which adds nothing (for float64,
/// -0.0: its sum with any value is that value), and no group is null.
template <typename In, typename Accumulator, typename Combine>
table::Column sum_without_nulls(table::Column const& column, Groups const& groups, table::DataType output,
                                Accumulator zero, Combine combine) {
    std::vector<Accumulator> sums(groups.count, zero);
    auto const* values = column.values<In>().data();
    for (std::size_t row = 0; row < column.size(); ++row) {
        auto& sum = sums[groups.of_row[row]];
        sum = combine(sum, values[row]);
    }
    table::ColumnBuffer data(sums.size() * sizeof(Accumulator));
    std::memcpy(data.data(), sums.data(), data.size());
    return table::Column::from_buffers(output, groups.count, {}, std::move(data), {});
}

/// Whether `a` orders before `b`: numerically, NaN above every number;
/// strings by their bytes.
template <typename A, typename B>
bool before(A const& a, B const& b) {
    if constexpr (std::is_same_v<A, double>) {
        if (std::isnan(a) || std::isnan(b)) {
            return !std::isnan(a) && std::isnan(b);
        }
    }
    return a < b;
}

/// The minimum (`smallest`) or maximum of each group's values of `column`.
template <typename In, typename Accumulator>
table::Column extreme(table::Column const& column, Groups const& groups, bool smallest) {
    return fold<In, Accumulator>(column, groups, column.type(), [smallest](Accumulator current, In value) {
        In const held(current);
        bool const replace = smallest ? before(value, held) : before(held, value);
        return replace ? Accumulator(value) : current;
    });
}

/// Column `aggregate` of the result: its kind over `table`'s column.
table::Column aggregate_column(table::Table const& table, Aggregate const& aggregate, Groups const& groups) {
    using table::DataType;
    if (aggregate.kind == AggregateKind::count) {
        std::vector<std::int64_t> counts(groups.count, 0);
        table::Column const* column = aggregate.column.empty() ? nullptr : &table.column(aggregate.column);
        if (column == nullptr || column->null_count() == 0) {
            for (std::size_t row = 0; row < table.num_rows(); ++row) {
                ++counts[groups.of_row[row]];
            }
        } else {
            for (std::size_t row = 0; row < table.num_rows(); ++row) {
                counts[groups.of_row[row]] += column->is_null(row) ? 0 : 1;
            }
        }
        table::ColumnBuilder builder(DataType::int64);
        builder.reserve(groups.count);
        for (auto const count : counts) {
            builder.append(count);
        }
        return builder.finish();
    }
    auto const& column = table.column(aggregate.column);
    auto const type = column.type();
    if (aggregate.kind == AggregateKind::sum) {
        auto const add_exactly = [&aggregate](std::int64_t sum, std::int64_t value) {
            std::int64_t result = 0;
            SPILLWAY_EXPECTS(!__builtin_add_overflow(sum, value, &result),
                             "the sum '" << aggregate.name << "' of column '" << aggregate.column
                                         << "' overflows int64",
                             InvalidArgument);
            return result;
        };
        auto const add = [](double sum, double value) { return sum + value; };
        // With rows, each group has one; with none, the one group of no keys is null.
        bool const without_nulls = column.null_count() == 0 && column.size() > 0;
        switch (type) {
            case DataType::int32:
                return without_nulls ? sum_without_nulls<std::int32_t>(column, groups, DataType::int64,
                                                                       std::int64_t{0}, add_exactly)
                                     : fold<std::int32_t, std::int64_t>(column, groups, DataType::int64, add_exactly);
            case DataType::int64:
                return without_nulls ? sum_without_nulls<std::int64_t>(column, groups, DataType::int64,
                                                                       std::int64_t{0}, add_exactly)
                                     : fold<std::int64_t, std::int64_t>(column, groups, DataType::int64, add_exactly);
            case DataType::float64:
                return without_nulls ? sum_without_nulls<double>(column, groups, DataType::float64, -0.0, add)
                                     : fold<double, double>(column, groups, DataType::float64, add);
            default: break;
        }
        SPILLWAY_FAIL("cannot sum column '" << aggregate.column << "' of type " << table::to_string(type)
                                            << " (for '" << aggregate.name << "')",
                      InvalidArgument);
    }
    bool const smallest = aggregate.kind == AggregateKind::min;
    return table::visit_stored_type(type, [&]<typename Stored>(Stored) {
        // Accumulated as a value of its own: a string, and a boolean as a bool.
        using Accumulator = std::conditional_t<std::is_same_v<Stored, std::string_view>, std::string,
                                               std::conditional_t<std::is_same_v<Stored, std::uint8_t>, bool, Stored>>;
        return extreme<Stored, Accumulator>(column, groups, smallest);
    });
}

}  // namespace

table::Table group_by(
    table::Table const& table, std::span<std::string const> keys, std::span<Aggregate const> aggregates
) {
    auto const key_columns = detail::column_indices(table, keys, true);
    auto const groups = assign_groups(table, key_columns);
    std::vector<table::Field> fields;
    std::vector<table::Column> columns;
    for (auto const index : key_columns) {
        fields.push_back(table.schema().field(index));
        columns.push_back(table.column(index).take(groups.first_row));
    }
    for (auto const& aggregate : aggregates) {
        auto column = aggregate_column(table, aggregate, groups);
        fields.push_back({.name = aggregate.name, .type = column.type()});
        columns.push_back(std::move(column));
    }
    return {table::Schema(std::move(fields)), std::move(columns)};
}

std::vector<Aggregate> merging_aggregates(std::span<Aggregate const> aggregates) {
    std::vector<Aggregate> merging;
    merging.reserve(aggregates.size());
    for (auto const& aggregate : aggregates) {
        auto const kind = aggregate.kind == AggregateKind::count ? AggregateKind::sum : aggregate.kind;
        merging.push_back({.kind = kind, .column = aggregate.name, .name = aggregate.name});
    }
    return merging;
}

}  // namespace spillway::query
