#pragma once
/// @file
/// The chunk numbers a rank generates, as a `seq_join` source.

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

}  // namespace spillway::cli
