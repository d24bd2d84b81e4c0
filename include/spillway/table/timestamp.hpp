#pragma once
/// @file
/// The text of timestamp values, `YYYY-MM-DD HH:MM:SS[.fraction][zone]`, and
/// the conversions between their units.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <spillway/table/data_type.hpp>

namespace spillway::table {

/// A timestamp as its text spells it.
struct TimestampText {
    std::int64_t seconds;       ///< since 1970-01-01 00:00:00, in UTC when `has_zone`
    std::uint32_t nanoseconds;  ///< 0 to 999,999,999, after `seconds`
    unsigned fraction_digits;   ///< the digits after the decimal point, 0 to 9
    bool has_zone;              ///< whether the text ends with `Z` or a UTC offset
};

/// Parses a timestamp: a date as `parse_days` reads it, a space or `T`,
/// `HH:MM:SS` (hours 00 to 23, seconds 00 to 59), an optional `.` and 1 to 9
/// digits of fraction, and an optional zone: `Z`, or an offset `+HH`,
/// `+HH:MM` or `+HHMM` (or `-`) of up to 23:59, which is subtracted to give
/// UTC. Returns nothing unless `text` is exactly such a timestamp.
std::optional<TimestampText> parse_timestamp(std::string_view text) noexcept;

/// The ticks of `text` in the unit of `type`, a timestamp type. Returns
/// nothing if `text` does not fit `type` exactly: a fraction finer than its
/// unit (trailing zeros aside), ticks beyond int64, a zone for a type without
/// one. Text without a zone is read as UTC for a `_utc` type.
std::optional<std::int64_t> timestamp_ticks(TimestampText const& text, DataType type) noexcept;

/// `ticks` of the timestamp type `type` as whole microseconds since the
/// epoch, rounded down, saturating at int64's limits: the one form in which
/// a timestamp is hashed, whatever its unit.
std::int64_t timestamp_microseconds(std::int64_t ticks, DataType type) noexcept;

/// `text` as whole microseconds since the epoch, as the other overload gives
/// them for the same instant in any unit.
std::int64_t timestamp_microseconds(TimestampText const& text) noexcept;

/// The most characters `format_timestamp` writes.
inline constexpr std::size_t max_timestamp_chars = 40;

/// Writes `ticks` of the timestamp type `type` as `YYYY-MM-DD HH:MM:SS`,
/// followed by a fraction of as many digits as the unit has when it is not
/// zero, and by `Z` for a `_utc` type, to `out`, which has room for
/// `max_timestamp_chars`. `parse_timestamp` and `timestamp_ticks` read it
/// back exactly. Returns the number of characters written.
std::size_t format_timestamp(std::int64_t ticks, DataType type, char* out) noexcept;

}  // namespace spillway::table
