#pragma once
/// @file
/// Reads the two-digit fields of dates and times.

namespace spillway::table::detail {

/// The value of the two decimal digits at `text[0]` and `text[1]`, or -1 if
/// either is no digit.
inline int two_digits(char const* text) noexcept {
    auto const high = static_cast<unsigned>(text[0] - '0');
    auto const low = static_cast<unsigned>(text[1] - '0');
    return high < 10 && low < 10 ? static_cast<int>(high * 10 + low) : -1;
}

}  // namespace spillway::table::detail
