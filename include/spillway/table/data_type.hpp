#pragma once
/// @file
/// The logical types a column can hold, and the C++ type each one stores.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace spillway::table {

/// The type of every value in a column. The numeric values are part of the
/// packed format (docs/table_format.md) and never change.
///
/// | type      | stores              | meaning                                   |
/// |-----------|---------------------|-------------------------------------------|
/// | `int32`   | `std::int32_t`      | a signed 32-bit integer                   |
/// | `int64`   | `std::int64_t`      | a signed 64-bit integer                   |
/// | `float64` | `double`            | an IEEE 754 double                        |
/// | `date32`  | `std::int32_t`      | days since 1970-01-01 (may be negative)   |
/// | `string`  | `std::int32_t` offsets + bytes | variable-length bytes (UTF-8 by convention) |
enum class DataType : std::uint8_t { int32 = 1, int64 = 2, float64 = 3, date32 = 4, string = 5 };

/// The lower-case name of `type`: `int32`, `int64`, `float64`, `date32` or `string`.
std::string_view to_string(DataType type) noexcept;

/// Parses a name written by `to_string` (case-insensitive).
/// @throws InvalidArgument naming the valid types if `name` is none of them.
DataType parse_data_type(std::string_view name);

/// Whether `code` is the numeric value of a `DataType`.
constexpr bool is_data_type(std::uint8_t code) noexcept {
    return code >= static_cast<std::uint8_t>(DataType::int32)
        && code <= static_cast<std::uint8_t>(DataType::string);
}

/// The bytes one row takes in a column's data buffer: the value's width for
/// fixed-width types, and the width of one offset for `string`.
constexpr std::size_t data_width(DataType type) noexcept {
    switch (type) {
        case DataType::int64:
        case DataType::float64: return 8;
        case DataType::int32:
        case DataType::date32:
        case DataType::string: return 4;
    }
    return 0;
}

/// Whether `T` is the C++ type that `type` stores its values as (`string`
/// stores none; its values are read as `std::string_view`).
template <typename T>
constexpr bool stores_values_as(DataType type) noexcept {
    switch (type) {
        case DataType::int32:
        case DataType::date32: return std::is_same_v<T, std::int32_t>;
        case DataType::int64: return std::is_same_v<T, std::int64_t>;
        case DataType::float64: return std::is_same_v<T, double>;
        case DataType::string: return false;
    }
    return false;
}

}  // namespace spillway::table
