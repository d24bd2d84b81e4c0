#include <spillway/query/hash_join.hpp>

#include <algorithm>
#include <bit>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/table/row_hash.hpp>
#include <spillway/table/schema.hpp>

#include "query/key_comparison.hpp"

namespace spillway::query {
namespace {

/// The hash of each row's keys in one side of a join: one int64 key, the
/// usual join key, by `detail::mix` of its value; other keys by their row
/// hash. Both sides hash alike, since their key types match; a null key's
/// hash is never used.
table::ChargedRowHashes key_hashes(table::Table const& table, std::span<std::size_t const> columns) {
    if (columns.size() != 1 || table.column(columns.front()).type() != table::DataType::int64) {
        return table::hash_rows_charged(table, columns);
    }
    auto const values = table.column(columns.front()).values<std::int64_t>();
    table::ChargedRowHashes hashes(values.size());
    std::transform(values.begin(), values.end(), hashes.begin(),
                   [](std::int64_t value) { return detail::mix(static_cast<std::uint64_t>(value)); });
    return hashes;
}

}  // namespace

JoinHashTable::JoinHashTable(table::Table build, std::span<std::string const> keys)
    : build_(std::move(build)), key_columns_(detail::column_indices(build_, keys)) {
    auto const rows = build_.num_rows();
    SPILLWAY_EXPECTS(rows < no_row, "a join's build side has " << rows << " rows, more than " << no_row - 1,
                     InvalidArgument);
    hashes_ = key_hashes(build_, key_columns_);
    buckets_.assign(std::bit_ceil(std::max<std::size_t>(2 * rows, 16)), no_row);
    next_.assign(rows, no_row);
    detail::KeyColumns const build_keys(build_, key_columns_);
    auto const mask = buckets_.size() - 1;
    // Inserting from the last row to the first leaves each bucket's chain in
    // row order. A row with a null key matches nothing and stays out.
    for (std::size_t row = rows; row-- > 0;) {
        if (build_keys.has_null(row)) {
            continue;
        }
        auto& head = buckets_[hashes_[row] & mask];
        next_[row] = head;
        head = static_cast<std::uint32_t>(row);
    }
}

table::Table JoinHashTable::probe(table::Table const& probe, std::span<std::string const> keys, JoinKind kind) const {
    auto const probe_columns = detail::column_indices(probe, keys);
    detail::KeyColumns const probe_keys(probe, probe_columns);
    detail::KeyColumns const build_keys(build_, key_columns_);
    probe_keys.check_comparable(build_keys, "a join's keys do not match");
    auto const hashes = key_hashes(probe, probe_columns);
    auto const mask = buckets_.size() - 1;

    std::vector<std::uint32_t> probe_rows;
    std::vector<std::uint32_t> build_rows;
    // The rows of `probe` matched through `same_keys(row, candidate)`, for
    // rows whose keys `probed(row)` lets through.
    auto const match = [&](auto probed, auto same_keys) {
        for (std::size_t row = 0; row < probe.num_rows(); ++row) {
            bool matched = false;
            if (probed(row)) {
                auto const hash = hashes[row];
                for (auto candidate = buckets_[hash & mask]; candidate != no_row; candidate = next_[candidate]) {
                    if (hashes_[candidate] != hash || !same_keys(row, candidate)) {
                        continue;
                    }
                    matched = true;
                    if (kind != JoinKind::inner) {
                        break;
                    }
                    probe_rows.push_back(static_cast<std::uint32_t>(row));
                    build_rows.push_back(candidate);
                }
            }
            if (kind != JoinKind::inner && matched == (kind == JoinKind::semi)) {
                probe_rows.push_back(static_cast<std::uint32_t>(row));
            }
        }
    };
    auto const& probe_key = probe.column(probe_columns.front());
    if (probe_columns.size() == 1 && probe_key.type() == table::DataType::int64 && probe_key.null_count() == 0) {
        // One int64 key, the usual join key: compared directly. A build row
        // with a null key is in no chain.
        auto const* probe_values = probe_key.values<std::int64_t>().data();
        auto const* build_values = build_.column(key_columns_.front()).values<std::int64_t>().data();
        match([](std::size_t) { return true; },
              [&](std::size_t row, std::uint32_t candidate) { return probe_values[row] == build_values[candidate]; });
    } else {
        match([&](std::size_t row) { return !probe_keys.has_null(row); },
              [&](std::size_t row, std::uint32_t candidate) { return probe_keys.equal(row, build_keys, candidate); });
    }

    if (kind != JoinKind::inner) {
        return probe.take(probe_rows);
    }
    auto fields = probe.schema().fields();
    std::vector<table::Column> columns;
    columns.reserve(probe.num_columns() + build_.num_columns());
    for (auto const& column : probe.columns()) {
        columns.push_back(column.take(probe_rows));
    }
    for (std::size_t index = 0; index < build_.num_columns(); ++index) {
        if (std::find(key_columns_.begin(), key_columns_.end(), index) != key_columns_.end()) {
            continue;
        }
        fields.push_back(build_.schema().field(index));
        columns.push_back(build_.column(index).take(build_rows));
    }
    return {table::Schema(std::move(fields)), std::move(columns)};
}

table::Table hash_join(
    table::Table const& build, std::span<std::string const> build_keys, table::Table const& probe,
    std::span<std::string const> probe_keys, JoinKind kind
) {
    return JoinHashTable(build, build_keys).probe(probe, probe_keys, kind);
}

}  // namespace spillway::query
