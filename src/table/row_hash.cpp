#include <spillway/table/row_hash.hpp>

#include <cstring>

#include "xxhash.hpp"

namespace spillway::table {
namespace {

/// Chains the values of `column` into `hashes`, one per row.
template <typename Value>
void hash_fixed(Column const& column, std::span<std::uint64_t> hashes) {
    auto const* values = reinterpret_cast<Value const*>(column.data_buffer().data());
    for (std::size_t row = 0; row < hashes.size(); ++row) {
        hashes[row] = column.is_null(row) ? XXH3_64bits_withSeed(nullptr, 0, ~hashes[row])
                                          : XXH3_64bits_withSeed(&values[row], sizeof(Value), hashes[row]);
    }
}

void hash_strings(Column const& column, std::span<std::uint64_t> hashes) {
    auto const offsets = column.offsets();
    auto const* characters = column.characters().data();
    for (std::size_t row = 0; row < hashes.size(); ++row) {
        hashes[row] = column.is_null(row)
                        ? XXH3_64bits_withSeed(nullptr, 0, ~hashes[row])
                        : XXH3_64bits_withSeed(characters + offsets[row],
                                               static_cast<std::size_t>(offsets[row + 1] - offsets[row]), hashes[row]);
    }
}

}  // namespace

std::vector<std::uint64_t> hash_rows(Table const& table, std::span<std::size_t const> columns, std::uint64_t seed) {
    std::vector<std::uint64_t> hashes(table.num_rows(), seed);
    for (auto const index : columns) {
        auto const& column = table.column(index);
        if (column.type() == DataType::string) {
            hash_strings(column, hashes);
        } else if (data_width(column.type()) == sizeof(std::uint32_t)) {
            hash_fixed<std::uint32_t>(column, hashes);
        } else {
            hash_fixed<std::uint64_t>(column, hashes);
        }
    }
    return hashes;
}

}  // namespace spillway::table
