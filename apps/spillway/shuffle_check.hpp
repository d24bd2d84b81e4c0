#pragma once
/// @file
/// Verifies the chunks a rank receives in a shuffle.

#include <cstdint>
#include <span>

#include <spillway/table/table.hpp>
#include <spillway/table/table_checksum.hpp>

namespace spillway::cli {

/// What the chunks of a shuffle's partitions held: their checksum, and how
/// many of their rows belong to another partition. Checks of several chunks,
/// partitions or ranks combine with `+=`.
///
/// Thread safety: a plain value.
struct ShuffleCheck {
    table::TableChecksum checksum;    ///< of every row (`table::TableChecksum::of`)
    std::uint64_t misplaced_rows = 0;  ///< rows whose key hashes to another partition

    /// Checks `chunk`, received for partition `partition` of `partitions`:
    /// adds its rows to the checksum and counts those whose `key_columns`
    /// hash (`table::partition_rows`) to another partition.
    /// @throws InvalidArgument if a key column is out of range or
    ///         `partition >= partitions`.
    void add(table::Table const& chunk, std::span<std::size_t const> key_columns, std::uint32_t partition,
             std::uint32_t partitions);

    ShuffleCheck& operator+=(ShuffleCheck const& other) noexcept {
        checksum += other.checksum;
        misplaced_rows += other.misplaced_rows;
        return *this;
    }
};

}  // namespace spillway::cli
