#pragma once
/// @file
/// Validity bitmaps: bit `i % 8` (least significant first) of byte `i / 8`
/// is set when row `i` is valid.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <spillway/table/column_buffer.hpp>

namespace spillway::table::detail {

/// The bytes a bitmap of `rows` bits takes.
constexpr std::size_t bitmap_bytes(std::size_t rows) noexcept { return (rows + 7) / 8; }

/// Bit `index` of `bits`.
inline bool get_bit(std::byte const* bits, std::size_t index) noexcept {
    return (std::to_integer<unsigned>(bits[index / 8]) >> (index % 8) & 1U) != 0;
}

/// Sets bit `index` of `bits` to `value`.
inline void set_bit(std::byte* bits, std::size_t index, bool value) noexcept {
    auto const mask = std::byte{1} << (index % 8);
    bits[index / 8] = value ? (bits[index / 8] | mask) : (bits[index / 8] & ~mask);
}

/// The number of set bits among the first `count` bits of `bits`.
inline std::size_t count_set_bits(std::byte const* bits, std::size_t count) noexcept {
    std::size_t set = 0;
    std::size_t index = 0;
    for (; index + 64 <= count; index += 64) {
        std::uint64_t word;
        std::memcpy(&word, bits + index / 8, sizeof(word));
        set += static_cast<std::size_t>(std::popcount(word));
    }
    for (; index < count; ++index) {
        set += get_bit(bits, index) ? 1 : 0;
    }
    return set;
}

/// Copies `count` bits from `source` starting at bit `source_offset` to
/// `destination` starting at bit `destination_offset`.
inline void copy_bits(std::byte const* source, std::size_t source_offset, std::byte* destination,
                      std::size_t destination_offset, std::size_t count) noexcept {
    if (source_offset % 8 == 0 && destination_offset % 8 == 0) {
        std::copy_n(source + source_offset / 8, count / 8, destination + destination_offset / 8);
        auto const done = count / 8 * 8;
        source_offset += done;
        destination_offset += done;
        count -= done;
    }
    for (std::size_t index = 0; index < count; ++index) {
        set_bit(destination, destination_offset + index, get_bit(source, source_offset + index));
    }
}

/// A bitmap of `rows` bits, all set.
inline ColumnBuffer all_valid_bitmap(std::size_t rows) {
    return ColumnBuffer(bitmap_bytes(rows), std::byte{0xff});
}

}  // namespace spillway::table::detail
