#include <spillway/table/table_checksum.hpp>

#include <cstdio>

#include "checksum_hashes.hpp"

namespace spillway::table {

TableChecksum TableChecksum::of(Table const& table) {
    TableChecksum checksum;
    for (auto const hash : detail::checksum_hashes(table)) {
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
