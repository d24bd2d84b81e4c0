#pragma once
/// @file
/// The chunk numbers a rank generates, as a `seq_join` source, and how many
/// there are.

#include <cstddef>
#include <optional>
#include <utility>

namespace spillway::cli {

/// A `seq_join` source (a callable returning `std::optional`) of the numbers
/// `first`, `first + stride`, ... below `end`: the chunks of a generator that
/// one of `stride` ranks makes. (A generator rather than `std::views::iota`,
/// whose libstdc++ 12 version clang 14 cannot compile.)
[[nodiscard]] inline auto chunk_numbers(std::size_t first, std::size_t stride, std::size_t end) {
    return [next = first, stride, end]() mutable -> std::optional<std::size_t> {
        if (next >= end) {
            return std::nullopt;
        }
        return std::exchange(next, next + stride);
    };
}

/// How many numbers `chunk_numbers(first, stride, end)` yields.
[[nodiscard]] constexpr std::size_t chunk_count(std::size_t first, std::size_t stride, std::size_t end) noexcept {
    return first < end ? (end - first + stride - 1) / stride : 0;
}

}  // namespace spillway::cli
