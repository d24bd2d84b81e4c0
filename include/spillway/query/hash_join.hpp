#pragma once
/// @file
/// Equi-joins of two tables through a hash table of one of them.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <spillway/memory/host_allocator.hpp>
#include <spillway/table/row_hash.hpp>
#include <spillway/table/table.hpp>

namespace spillway::query {

/// Which rows a join gives.
///
/// | kind    | rows                                                         |
/// |---------|--------------------------------------------------------------|
/// | `inner` | one per (probe row, build row) pair with equal keys           |
/// | `semi`  | each probe row with at least one matching build row, once     |
/// | `anti`  | each probe row without a matching build row (`NOT EXISTS`)    |
///
/// A null key matches nothing, so an `anti` join keeps a probe row whose
/// key has a null.
enum class JoinKind : std::uint8_t { inner, semi, anti };

/// A hash table over the rows of a table (the build side), probed by the
/// rows of others (the probe side) for equal keys. Keys compare by type
/// (integers, dates, strings by value; `float64` numerically, but for NaN,
/// which matches NaN, as the row hash takes every NaN as one value); the
/// key columns of both sides must have the same types in the same order.
///
/// The result of a probe holds the probe side's rows in their order. An
/// `inner` join gives, for each, its matches in build order, as the probe's
/// columns followed by the build side's columns other than its keys (which
/// equal the probe's keys); `semi` and `anti` give the probe's columns only.
///
/// Building is O(build rows); a probe is O(probe rows + result rows) for
/// keys that do not collide. The index (20 to 28 bytes a build row) is
/// charged to the HOST resource current where the table is built
/// (`memory::ScopedHostResource`), as tables made there are.
///
/// Thread safety: immutable after construction; `probe` may be called
/// concurrently.
class JoinHashTable {
  public:
    /// Indexes `build` by its columns named `keys`.
    /// @throws InvalidArgument if `keys` is empty or names a column `build`
    ///         does not have, or if `build` has more than 2^32 - 2 rows.
    JoinHashTable(table::Table build, std::span<std::string const> keys);

    /// The rows of `probe` joined with the build side by its columns named
    /// `keys` (see the class comment).
    /// @throws InvalidArgument if `keys` names a column `probe` does not
    ///         have, differs from the build keys in number or types, or the
    ///         result of an `inner` join would repeat a column name.
    [[nodiscard]] table::Table probe(table::Table const& probe, std::span<std::string const> keys, JoinKind kind) const;

    /// The build side.
    [[nodiscard]] table::Table const& build() const noexcept { return build_; }

  private:
    /// Sentinel for "no row" in buckets_ and next_.
    static constexpr std::uint32_t no_row = UINT32_MAX;

    table::Table build_;
    std::vector<std::size_t> key_columns_;  ///< indices of the keys in build_
    table::ChargedRowHashes hashes_;        ///< per build row: hash of its keys
    std::vector<std::uint32_t, memory::HostAllocator<std::uint32_t>>
        buckets_;                           ///< first row of each bucket; power-of-two count
    std::vector<std::uint32_t, memory::HostAllocator<std::uint32_t>>
        next_;                              ///< per build row: next row of its bucket, in row order
};

/// `JoinHashTable(build, build_keys).probe(probe, probe_keys, kind)`.
/// @throws InvalidArgument as those do.
[[nodiscard]] table::Table hash_join(
    table::Table const& build, std::span<std::string const> build_keys, table::Table const& probe,
    std::span<std::string const> probe_keys, JoinKind kind
);

}  // namespace spillway::query
