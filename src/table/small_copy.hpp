#pragma once
/// @file
/// Copies short byte strings without a call to memcpy: most strings in a
/// table are a few bytes long, where the call costs more than the copy.

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace spillway::table::detail {

/// Copies `size` bytes from `source` to `destination`, which do not overlap.
/// Up to 32 bytes take two fixed-size copies that may overlap each other
/// (each compiles to a load and a store); longer strings go to memcpy.
inline void copy_small(std::byte* destination, std::byte const* source, std::size_t size) noexcept {
    auto const copy_pair = [&]<std::size_t width>() {
        std::byte head[width];
        std::byte tail[width];
        std::memcpy(head, source, width);
        std::memcpy(tail, source + size - width, width);
        std::memcpy(destination, head, width);
        std::memcpy(destination + size - width, tail, width);
    };
    if (size > 32) {
        std::memcpy(destination, source, size);
    } else if (size >= 16) {
        copy_pair.template operator()<16>();
    } else if (size >= 8) {
        copy_pair.template operator()<8>();
    } else if (size >= 4) {
        copy_pair.template operator()<4>();
    } else if (size != 0) {
        destination[0] = source[0];
        destination[size / 2] = source[size / 2];
        destination[size - 1] = source[size - 1];
    }
}

}  // namespace spillway::table::detail
