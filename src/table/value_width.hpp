#pragma once
/// @file
/// Moves a fixed-width column's values as bits of their width, whatever
/// they mean.

#include <cstdint>

#include <spillway/table/data_type.hpp>

namespace spillway::table::detail {

/// Calls `visit` with a zero of the unsigned integer type as wide as one
/// value of `type` (1, 4 or 8 bytes) and returns what it returns.
/// Requires: `type` is not `string`.
template <typename Visit>
decltype(auto) visit_value_width(DataType type, Visit&& visit) {
    switch (data_width(type)) {
        case sizeof(std::uint8_t): return visit(std::uint8_t{});
        case sizeof(std::uint32_t): return visit(std::uint32_t{});
        default: return visit(std::uint64_t{});
    }
}

}  // namespace spillway::table::detail
