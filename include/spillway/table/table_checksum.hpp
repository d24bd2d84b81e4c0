#pragma once
/// @file
/// An order-independent checksum of a multiset of rows, for verifying that a
/// shuffle neither lost nor duplicated nor changed a row.

#include <cstdint>
#include <string>

#include <spillway/table/table.hpp>

namespace spillway::table {

/// The row count, and the sum and the exclusive or of the row hashes
/// (`hash_rows` of every column with `checksum_hash_seed`, but each
/// timestamp hashed by its own ticks rather than its microseconds), of a
/// multiset of rows. The same rows give the same checksum in any order, split into any
/// chunks, partitions or ranks: combine the parts with `+=`. A lost,
/// duplicated or changed row changes it (up to hash collisions).
///
/// Thread safety: a plain value; externally synchronized.
struct TableChecksum {
    std::uint64_t rows = 0;      ///< the number of rows added
    std::uint64_t hash_sum = 0;  ///< the sum of their hashes, modulo 2^64
    std::uint64_t hash_xor = 0;  ///< the exclusive or of their hashes

    /// The checksum of the rows of `table`.
    [[nodiscard]] static TableChecksum of(Table const& table);

    /// Adds one row whose hash is `row_hash`, for rows that are hashed some
    /// other way (raw CSV lines, say). Checksums built from different hashes
    /// of the same rows do not compare equal.
    void add(std::uint64_t row_hash) noexcept {
        ++rows;
        hash_sum += row_hash;
        hash_xor ^= row_hash;
    }

    /// Adds the rows of `other`.
    TableChecksum& operator+=(TableChecksum const& other) noexcept {
        rows += other.rows;
        hash_sum += other.hash_sum;
        hash_xor ^= other.hash_xor;
        return *this;
    }

    /// `rows=N sum=0x... xor=0x...`, for messages.
    [[nodiscard]] std::string to_string() const;

    friend bool operator==(TableChecksum const&, TableChecksum const&) = default;
};

}  // namespace spillway::table
