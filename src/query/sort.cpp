#include <spillway/query/sort.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <spillway/core/error.hpp>

#include "query/key_comparison.hpp"

namespace spillway::query {
namespace {

/// Orders row numbers of one table by `keys`, ties by row number, so that
/// any sort with it is stable.
class RowOrder {
  public:
    RowOrder(table::Table const& table, std::span<SortKey const> keys)
        : columns_(table, indices(table, keys)), descending_(keys.size()) {
        for (std::size_t key = 0; key < keys.size(); ++key) {
            descending_[key] = keys[key].descending;
        }
    }

    bool operator()(std::uint32_t a, std::uint32_t b) const {
        for (std::size_t key = 0; key < columns_.size(); ++key) {
            int order = columns_.compare(key, a, columns_, b);
            if (order == 0) {
                continue;
            }
            bool const values = !columns_.is_null(key, a) && !columns_.is_null(key, b);
            return (descending_[key] && values) ? order > 0 : order < 0;
        }
        return a < b;
    }

  private:
    static std::vector<std::size_t> indices(table::Table const& table, std::span<SortKey const> keys) {
        SPILLWAY_EXPECTS(!keys.empty(), "a sort needs at least one key", InvalidArgument);
        std::vector<std::string> names;
        for (auto const& key : keys) {
            names.push_back(key.column);
        }
        return detail::column_indices(table, names);
    }

    detail::KeyColumns columns_;
    std::vector<bool> descending_;  ///< per key
};

std::vector<std::uint32_t> all_rows(table::Table const& table) {
    std::vector<std::uint32_t> rows(table.num_rows());
    std::iota(rows.begin(), rows.end(), 0U);
    return rows;
}

}  // namespace

table::Table sort(table::Table const& table, std::span<SortKey const> keys) {
    RowOrder const order(table, keys);
    auto rows = all_rows(table);
    std::sort(rows.begin(), rows.end(), order);
    return table.take(rows);
}

table::Table top_k(table::Table const& table, std::span<SortKey const> keys, std::size_t k) {
    RowOrder const order(table, keys);
    auto rows = all_rows(table);
    auto const kept = std::min(k, rows.size());
    std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(kept), rows.end(), order);
    rows.resize(kept);
    return table.take(rows);
}

}  // namespace spillway::query
