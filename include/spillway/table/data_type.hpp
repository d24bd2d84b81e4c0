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
/// | `boolean` | `std::uint8_t`      | 0 (false) or 1 (true), one byte a value   |
/// | `timestamp_ms` | `std::int64_t` | a date and time without a zone: milliseconds since 1970-01-01 00:00:00 |
/// | `timestamp_us` | `std::int64_t` | the same in microseconds                  |
/// | `timestamp_ns` | `std::int64_t` | the same in nanoseconds                   |
/// | `timestamp_ms_utc` | `std::int64_t` | an instant: milliseconds since 1970-01-01 00:00:00 UTC |
/// | `timestamp_us_utc` | `std::int64_t` | the same in microseconds              |
/// | `timestamp_ns_utc` | `std::int64_t` | the same in nanoseconds               |
enum class DataType : std::uint8_t {
    int32 = 1,
    int64 = 2,
    float64 = 3,
    date32 = 4,
    string = 5,
    boolean = 6,
    timestamp_ms = 7,
    timestamp_us = 8,
    timestamp_ns = 9,
    timestamp_ms_utc = 10,
    timestamp_us_utc = 11,
    timestamp_ns_utc = 12,
};

/// The lower-case name of `type`, as the table above gives it: `int32`,
/// `timestamp_us_utc` and so on.
std::string_view to_string(DataType type) noexcept;

/// Parses a name written by `to_string` (case-insensitive).
/// @throws InvalidArgument naming the valid types if `name` is none of them.
DataType parse_data_type(std::string_view name);

/// Whether `code` is the numeric value of a `DataType`.
constexpr bool is_data_type(std::uint8_t code) noexcept {
    return code >= static_cast<std::uint8_t>(DataType::int32)
        && code <= static_cast<std::uint8_t>(DataType::timestamp_ns_utc);
}

/// Whether `type` is one of the six timestamp types.
constexpr bool is_timestamp(DataType type) noexcept {
    return type >= DataType::timestamp_ms && type <= DataType::timestamp_ns_utc;
}

/// Whether `type` is a timestamp of an instant in UTC (`timestamp_*_utc`).
constexpr bool is_utc_timestamp(DataType type) noexcept {
    return type >= DataType::timestamp_ms_utc && type <= DataType::timestamp_ns_utc;
}

/// The ticks a second holds in a timestamp type: 1000 for `_ms`, 10^6 for
/// `_us` and 10^9 for `_ns`; 0 for the types that are no timestamp.
constexpr std::int64_t ticks_per_second(DataType type) noexcept {
    switch (type) {
        case DataType::timestamp_ms:
        case DataType::timestamp_ms_utc: return 1'000;
        case DataType::timestamp_us:
        case DataType::timestamp_us_utc: return 1'000'000;
        case DataType::timestamp_ns:
        case DataType::timestamp_ns_utc: return 1'000'000'000;
        default: return 0;
    }
}

/// Calls `visit` with a value-initialized object of the C++ type that
/// `type` stores its values as (the table at the top of this file), or of
/// `std::string_view` for `string`, and returns what it returns: the one
/// switch over the types for code that depends only on how values are
/// stored. `visit` returns the same type for each.
template <typename Visit>
constexpr decltype(auto) visit_stored_type(DataType type, Visit&& visit) {
    switch (type) {
        case DataType::int32:
        case DataType::date32: return visit(std::int32_t{});
        case DataType::int64:
        case DataType::timestamp_ms:
        case DataType::timestamp_us:
        case DataType::timestamp_ns:
        case DataType::timestamp_ms_utc:
        case DataType::timestamp_us_utc:
        case DataType::timestamp_ns_utc: return visit(std::int64_t{});
        case DataType::float64: return visit(double{});
        case DataType::boolean: return visit(std::uint8_t{});
        case DataType::string: break;
    }
    return visit(std::string_view{});
}

/// The bytes one row takes in a column's data buffer: the value's width for
/// fixed-width types, and the width of one offset for `string`.
constexpr std::size_t data_width(DataType type) noexcept {
    return visit_stored_type(type, []<typename Stored>(Stored) {
        return std::is_same_v<Stored, std::string_view> ? sizeof(std::int32_t) : sizeof(Stored);
    });
}

/// Whether `T` is the C++ type that `type` stores its values as (`string`
/// stores none; its values are read as `std::string_view`).
template <typename T>
constexpr bool stores_values_as(DataType type) noexcept {
    return visit_stored_type(type, []<typename Stored>(Stored) {
        return !std::is_same_v<Stored, std::string_view> && std::is_same_v<Stored, T>;
    });
}

}  // namespace spillway::table
