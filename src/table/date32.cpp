#include <spillway/table/date32.hpp>

#include <algorithm>
#include <charconv>
#include <limits>

#include "two_digits.hpp"

namespace spillway::table {
namespace {

using detail::two_digits;

constexpr bool is_leap(std::int64_t year) noexcept {
    return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
}

constexpr std::uint32_t days_in_month(std::int64_t year, std::uint32_t month) noexcept {
    constexpr std::uint32_t lengths[12]{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && is_leap(year) ? 29 : lengths[month - 1];
}

/// The most digits a year of `parse_days` has.
constexpr std::size_t max_year_digits = 9;

}  // namespace

std::optional<std::int64_t> parse_days(std::string_view text) noexcept {
    // The year runs up to the dash that leaves exactly "MM-DD" after it.
    if (text.size() == 10 && text[4] == '-' && text[7] == '-') {
        // The common case, a four-digit year, without from_chars.
        auto const century = two_digits(text.data());
        auto const year_of_century = two_digits(text.data() + 2);
        auto const month = two_digits(text.data() + 5);
        auto const day = two_digits(text.data() + 8);
        auto const year = century * 100 + year_of_century;
        if (century < 0 || year_of_century < 0 || month < 1 || month > 12 || day < 1
            || static_cast<std::uint32_t>(day) > days_in_month(year, static_cast<std::uint32_t>(month)))
        {
            return std::nullopt;
        }
        return days_from_civil({year, static_cast<std::uint32_t>(month), static_cast<std::uint32_t>(day)});
    }
    if (text.size() < 10 || text[text.size() - 3] != '-' || text[text.size() - 6] != '-') {
        return std::nullopt;
    }
    auto const year_text = text.substr(0, text.size() - 6);
    auto const digits = year_text.substr(year_text.front() == '-' ? 1 : 0);
    if (digits.size() < 4) {
        return std::nullopt;
    }
    // Leading zeros aside, at most `max_year_digits` digits.
    auto const significant = digits.substr(std::min(digits.find_first_not_of('0'), digits.size()));
    std::int64_t year = 0;
    auto const [end, error] = std::from_chars(year_text.data(), year_text.data() + year_text.size(), year);
    auto const month = two_digits(text.data() + text.size() - 5);
    auto const day = two_digits(text.data() + text.size() - 2);
    if (significant.size() > max_year_digits || error != std::errc{} || end != year_text.data() + year_text.size()
        || month < 1 || month > 12 || day < 1
        || static_cast<std::uint32_t>(day) > days_in_month(year, static_cast<std::uint32_t>(month)))
    {
        return std::nullopt;
    }
    return days_from_civil(
        {static_cast<std::int32_t>(year), static_cast<std::uint32_t>(month), static_cast<std::uint32_t>(day)}
    );
}

std::optional<std::int32_t> parse_date32(std::string_view text) noexcept {
    auto const days = parse_days(text);
    if (!days || *days < std::numeric_limits<std::int32_t>::min() || *days > std::numeric_limits<std::int32_t>::max()) {
        return std::nullopt;
    }
    return static_cast<std::int32_t>(*days);
}

std::size_t format_date32(std::int32_t days, char* out) noexcept { return format_civil(to_civil(days), out); }

std::size_t format_civil(CivilDate date, char* out) noexcept {
    auto const magnitude = static_cast<std::uint32_t>(date.year < 0 ? -static_cast<std::int64_t>(date.year) : date.year);
    char* cursor = out;
    if (date.year < 0) {
        *cursor++ = '-';
    }
    for (std::uint32_t power = 1000; power > 1 && magnitude < power; power /= 10) {
        *cursor++ = '0';
    }
    cursor = std::to_chars(cursor, out + max_date32_chars, magnitude).ptr;
    for (auto const part : {date.month, date.day}) {
        *cursor++ = '-';
        *cursor++ = static_cast<char>('0' + part / 10);
        *cursor++ = static_cast<char>('0' + part % 10);
    }
    return static_cast<std::size_t>(cursor - out);
}

}  // namespace spillway::table
