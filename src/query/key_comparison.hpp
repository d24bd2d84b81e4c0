#pragma once
/// @file
/// Typed comparisons of rows by some of their columns, for the operators
/// that match (joins, group-by) and order (sort) rows.
#include <cmath>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/table/table.hpp>

namespace spillway::query::detail {

/// The indices of the columns of `table` named `names`, in that order.
/// @throws InvalidArgument naming the columns there are if a name is none
///         of them, or if `names` is empty and `allow_empty` is false.
inline std::vector<std::size_t> column_indices(
    table::Table const& table, std::span<std::string const> names, bool allow_empty = false
) {
    SPILLWAY_EXPECTS(allow_empty || !names.empty(), "no key columns were given", InvalidArgument);
    std::vector<std::size_t> indices;
    indices.reserve(names.size());
    for (auto const& name : names) {
        indices.push_back(table.schema().index_of(name));
    }
    return indices;
}

/// A hash of a key packed into one integer whose low bits, which pick a
/// slot, depend on all of its bits (SplitMix64's finalizer): cheaper than
/// the documented row hash, where only equal keys need equal hashes.
inline std::uint64_t mix(std::uint64_t key) noexcept {
    key = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9;
    key = (key ^ (key >> 27)) * 0x94d049bb133111eb;
    return key ^ (key >> 31);
}

/// The key columns of one table, compared with those of another (or the
/// same) table row by row. Values compare by type: integers and dates as
/// integers, `float64` numerically with every NaN equal to every other,
/// strings by their bytes.
///
/// Thread safety: immutable; the table must outlive it.
class KeyColumns {
  public:
    /// The columns `indices` of `table`.
    KeyColumns(table::Table const& table, std::span<std::size_t const> indices) {
        columns_.reserve(indices.size());
        for (auto const index : indices) {
            columns_.push_back(&table.column(index));
        }
    }

    /// Whether `other` has as many key columns of the same types, so that
    /// rows of the two can be compared.
    /// @throws InvalidArgument naming `what` if not.
    void check_comparable(KeyColumns const& other, char const* what) const {
        SPILLWAY_EXPECTS(columns_.size() == other.columns_.size(),
                         what << ": " << columns_.size() << " key columns against " << other.columns_.size(),
                         InvalidArgument);
        for (std::size_t i = 0; i < columns_.size(); ++i) {
            SPILLWAY_EXPECTS(columns_[i]->type() == other.columns_[i]->type(),
                             what << ": key " << i << " is " << table::to_string(columns_[i]->type())
                                  << " on one side and " << table::to_string(other.columns_[i]->type())
                                  << " on the other",
                             InvalidArgument);
        }
    }

    /// Whether any key of row `row` is null.
    [[nodiscard]] bool has_null(std::size_t row) const noexcept {
        for (auto const* column : columns_) {
            if (column->is_null(row)) {
                return true;
            }
        }
        return false;
    }

    /// Whether key `key` of row `row` is null.
    [[nodiscard]] bool is_null(std::size_t key, std::size_t row) const noexcept { return columns_[key]->is_null(row); }

    /// Whether row `row` here and row `other_row` of `other` have equal
    /// keys, a null equal to a null. Requires: `check_comparable(other)`.
    [[nodiscard]] bool equal(std::size_t row, KeyColumns const& other, std::size_t other_row) const {
        for (std::size_t i = 0; i < columns_.size(); ++i) {
            if (!equal_values(*columns_[i], row, *other.columns_[i], other_row)) {
                return false;
            }
        }
        return true;
    }

    /// The order of row `row` here against row `other_row` of `other` by
    /// column `key`, nulls after every value. Requires: as `equal`.
    [[nodiscard]] int compare(std::size_t key, std::size_t row, KeyColumns const& other, std::size_t other_row) const {
        return compare_values(*columns_[key], row, *other.columns_[key], other_row);
    }

    /// The number of key columns.
    [[nodiscard]] std::size_t size() const noexcept { return columns_.size(); }

  private:
    /// Whether value `a` of `left` equals value `b` of `right` (`compare_values`
    /// gives 0), with one comparison. Requires: both columns have one type.
    static bool equal_values(table::Column const& left, std::size_t a, table::Column const& right, std::size_t b) {
        bool const a_null = left.is_null(a);
        if (a_null || right.is_null(b)) {
            return a_null && right.is_null(b);
        }
        return table::visit_stored_type(left.type(), [&]<typename Stored>(Stored) {
            if constexpr (std::is_same_v<Stored, std::string_view>) {
                return equal_strings(left.string(a), right.string(b));
            } else if constexpr (std::is_same_v<Stored, double>) {
                double const x = left.values<double>()[a];
                double const y = right.values<double>()[b];
                return x == y || (std::isnan(x) && std::isnan(y));
            } else {
                return left.values<Stored>()[a] == right.values<Stored>()[b];
            }
        });
    }

    /// Whether `x` and `y` hold the same bytes; those of up to 8 bytes (flags,
    /// codes) compared in place rather than by a call to `memcmp`.
    static bool equal_strings(std::string_view x, std::string_view y) noexcept {
        if (x.size() != y.size()) {
            return false;
        }
        if (x.size() > 8) {
            return x == y;
        }
        for (std::size_t i = 0; i < x.size(); ++i) {
            if (x[i] != y[i]) {
                return false;
            }
        }
        return true;
    }

    /// -1, 0 or 1 as value `a` of `left` is before, equal to or after value
    /// `b` of `right`, nulls last. Requires: both columns have one type.
    static int compare_values(table::Column const& left, std::size_t a, table::Column const& right, std::size_t b) {
        bool const a_null = left.is_null(a);
        bool const b_null = right.is_null(b);
        if (a_null || b_null) {
            return static_cast<int>(a_null) - static_cast<int>(b_null);
        }
        return table::visit_stored_type(left.type(), [&]<typename Stored>(Stored) {
            if constexpr (std::is_same_v<Stored, std::string_view>) {
                return order(left.string(a), right.string(b));
            } else if constexpr (std::is_same_v<Stored, double>) {
                double const x = left.values<double>()[a];
                double const y = right.values<double>()[b];
                if (std::isnan(x) || std::isnan(y)) {
                    return static_cast<int>(std::isnan(x)) - static_cast<int>(std::isnan(y));
                }
                return order(x, y);
            } else {
                return order(left.values<Stored>()[a], right.values<Stored>()[b]);
            }
        });
    }

    template <typename T>
    static int order(T const& x, T const& y) noexcept {
        return x < y ? -1 : (y < x ? 1 : 0);
    }

    std::vector<table::Column const*> columns_;  ///< not null, of the table given
};

}  // namespace spillway::query::detail
