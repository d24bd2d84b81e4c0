#pragma once
/// @file
/// Names compared without regard to the case of ASCII letters.

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace spillway {

/// `text` with its ASCII capitals lowered; other bytes as they are.
[[nodiscard]] inline std::string to_lower(std::string_view text) {
    std::string result(text);
    std::ranges::transform(result, result.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return result;
}

/// Whether `left` and `right` are equal but for the case of ASCII letters.
[[nodiscard]] inline bool equals_ignoring_case(std::string_view left, std::string_view right) noexcept {
    return std::ranges::equal(left, right, [](unsigned char a, unsigned char b) {
        return std::tolower(a) == std::tolower(b);
    });
}

}  // namespace spillway
