#pragma once
/// @file
/// How a boolean is spelled as text.

#include <algorithm>
#include <optional>
#include <string_view>

namespace spillway::table {

/// Reads `true` or `false` in any case (`true`, `True`, `TRUE`, ...: the
/// spellings that Spark, DuckDB, Polars, pandas and R write). Anything else,
/// `1`, `t` or ` true` included, is no boolean: `std::nullopt`.
constexpr std::optional<bool> parse_boolean(std::string_view text) noexcept {
    auto const spells = [text](std::string_view lower_case) {
        // Or-ing 0x20 lowers an ASCII capital and leaves a lower-case letter
        // alone; no other byte becomes a lower-case letter by it.
        return text.size() == lower_case.size()
            && std::equal(text.begin(), text.end(), lower_case.begin(), [](char letter, char lower) {
                   return static_cast<char>(letter | 0x20) == lower;
               });
    };
    if (spells("true")) {
        return true;
    }
    if (spells("false")) {
        return false;
    }
    return std::nullopt;
}

}  // namespace spillway::table
