#pragma once
/// @file
/// The memory tiers a buffer can live in, ordered from most to least preferred.

#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string_view>

namespace spillway::memory {

/// A memory tier. Tiers are ordered by preference: a buffer in an earlier tier
/// is cheaper to use, and spilling moves buffers to a later one.
///
/// - `HOST`: the budgeted working memory of this process.
/// - `DISK`: spill files in this process's spill directory.
///
/// A faster tier (a `DEVICE`) goes before `HOST`. Code that handles every tier
/// iterates `memory_types` and indexes with `tier_index`; it never relies on
/// the numeric values, so a new tier does not rewrite callers.
enum class MemoryType : std::uint8_t { HOST, DISK };

/// Every tier, most preferred first.
inline constexpr std::array<MemoryType, 2> memory_types{MemoryType::HOST, MemoryType::DISK};

/// The number of tiers, for arrays indexed by `tier_index`.
inline constexpr std::size_t memory_type_count = memory_types.size();

/// The position of `tier` in `memory_types`: 0 for the most preferred.
constexpr std::size_t tier_index(MemoryType tier) noexcept {
    return static_cast<std::size_t>(tier);
}

/// The tier's name in upper case: `HOST` or `DISK`.
std::string_view to_string(MemoryType tier) noexcept;

/// Writes `to_string(tier)`.
std::ostream& operator<<(std::ostream& out, MemoryType tier);

}  // namespace spillway::memory
