#include <spillway/table/table_checksum.hpp>

#include <cstdio>
#include <numeric>

#include <spillway/table/row_hash.hpp>

namespace spillway::table {

TableChecksum TableChecksum::of(Table const& table) {
    std::vector<std::size_t> columns(table.num_columns());
    std::iota(columns.begin(), columns.end(), std::size_t{0});
    TableChecksum checksum;
    for (auto const hash : hash_rows(table, columns, checksum_hash_seed)) {
        checksum.add(hash);
    }
    return checksum;
}

std::string TableChecksum::to_string() const {
    char text[80];
    std::snprintf(text, sizeof(text), "rows=%llu sum=0x%016llx xor=0x%016llx", static_cast<unsigned long long>(rows),
                  static_cast<unsigned long long>(hash_sum), static_cast<unsigned long long>(hash_xor));
    return text;
}

}  // namespace spillway::table
