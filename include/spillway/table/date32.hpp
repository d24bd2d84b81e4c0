#pragma once
/// @file
/// Conversions between `date32` values (days since 1970-01-01) and calendar
/// dates in the proleptic Gregorian calendar, and their `YYYY-MM-DD` text.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace spillway::table {

/// A calendar date.
struct CivilDate {
    std::int32_t year;
    std::uint32_t month;  ///< 1 to 12
    std::uint32_t day;    ///< 1 to the length of the month

    friend bool operator==(CivilDate const&, CivilDate const&) = default;
};

/// The days from 1970-01-01 to `date`. Requires: `date` is a valid date.
constexpr std::int64_t days_from_civil(CivilDate date) noexcept {
    // Howard Hinnant's days_from_civil: counts from 0000-03-01 in 400-year eras.
    auto const year = static_cast<std::int64_t>(date.year) - (date.month <= 2 ? 1 : 0);
    auto const era = (year >= 0 ? year : year - 399) / 400;
    auto const year_of_era = year - era * 400;
    auto const day_of_year = (153 * (date.month > 2 ? date.month - 3 : date.month + 9) + 2) / 5 + date.day - 1;
    auto const day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    return era * 146097 + day_of_era - 719468;
}

/// The `date32` of `date`. Requires: `date` is a valid date whose day count
/// fits in 32 bits (years within about ±5.8 million).
constexpr std::int32_t to_date32(CivilDate date) noexcept { return static_cast<std::int32_t>(days_from_civil(date)); }

/// The calendar date `days` after 1970-01-01. Requires: its year fits in
/// 32 bits (`days` within about ±7.8 * 10^11).
constexpr CivilDate to_civil(std::int64_t days) noexcept {
    auto const shifted = static_cast<std::int64_t>(days) + 719468;
    auto const era = (shifted >= 0 ? shifted : shifted - 146096) / 146097;
    auto const day_of_era = shifted - era * 146097;
    auto const year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    auto const day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    auto const month_index = (5 * day_of_year + 2) / 153;
    auto const day = static_cast<std::uint32_t>(day_of_year - (153 * month_index + 2) / 5 + 1);
    auto const month = static_cast<std::uint32_t>(month_index < 10 ? month_index + 3 : month_index - 9);
    auto const year = static_cast<std::int32_t>(year_of_era + era * 400 + (month <= 2 ? 1 : 0));
    return {year, month, day};
}

/// The most characters `format_date32` writes.
inline constexpr std::size_t max_date32_chars = 16;

/// Parses `YYYY-MM-DD` (a year of four or more digits, optionally negative).
/// Returns nothing unless `text` is exactly such a valid date that fits in a
/// `date32`.
std::optional<std::int32_t> parse_date32(std::string_view text) noexcept;

/// The days from 1970-01-01 to the date `text` spells, read as
/// `parse_date32` reads it but for any year from -999,999,999 to
/// 999,999,999: the dates of timestamps, which reach beyond a date32's.
std::optional<std::int64_t> parse_days(std::string_view text) noexcept;

/// Writes `date` as `YYYY-MM-DD` (the year zero-padded to four digits, with
/// a `-` if negative) to `out`, which has room for `max_date32_chars`.
/// Returns the number of characters written.
std::size_t format_civil(CivilDate date, char* out) noexcept;

/// Writes `days` as `YYYY-MM-DD` (the year zero-padded to four digits, with
/// a `-` if negative) to `out`, which has room for `max_date32_chars`.
/// Returns the number of characters written.
std::size_t format_date32(std::int32_t days, char* out) noexcept;

}  // namespace spillway::table
