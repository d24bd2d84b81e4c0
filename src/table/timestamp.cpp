#include <spillway/table/timestamp.hpp>

#include <cstdint>
#include <initializer_list>
#include <limits>

#include <spillway/table/date32.hpp>

#include "two_digits.hpp"

namespace spillway::table {
namespace {

using detail::two_digits;

constexpr std::int64_t seconds_per_day = 86'400;

/// The seconds east of UTC that `zone` (after `+` or `-`) spells as `HH`,
/// `HH:MM` or `HHMM`, or -1.
int offset_seconds(std::string_view zone) noexcept {
    if (zone.size() != 2 && zone.size() != 4 && !(zone.size() == 5 && zone[2] == ':')) {
        return -1;
    }
    auto const hours = two_digits(zone.data());
    auto const minutes = zone.size() == 2 ? 0 : two_digits(zone.data() + zone.size() - 2);
    if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) {
        return -1;
    }
    return hours * 3600 + minutes * 60;
}

/// `value` divided by `divisor` (positive), rounded towards minus infinity,
/// and what is left, from 0 to `divisor - 1`.
struct FloorDivision {
    std::int64_t quotient;
    std::int64_t remainder;
};
constexpr FloorDivision floor_divide(std::int64_t value, std::int64_t divisor) noexcept {
    auto const remainder = value % divisor;
    return remainder < 0 ? FloorDivision{value / divisor - 1, remainder + divisor}
                         : FloorDivision{value / divisor, remainder};
}

/// `value * factor + addend` (`factor` positive, `addend` from 0 to
/// `factor - 1`), or nothing if that is beyond int64. Below zero it counts
/// down from `(value + 1) * factor`: the earliest results' `value * factor`
/// alone is beyond int64, as the latest results' `(value + 1) * factor` is.
std::optional<std::int64_t> multiply_add(std::int64_t value, std::int64_t factor, std::int64_t addend) noexcept {
    bool const down = value < 0 && addend > 0;
    std::int64_t result = 0;
    if (__builtin_mul_overflow(value + (down ? 1 : 0), factor, &result)
        || __builtin_add_overflow(result, down ? addend - factor : addend, &result))
    {
        return std::nullopt;
    }
    return result;
}

/// `multiply_add`, or int64's limit on `value`'s side where that is nothing.
std::int64_t saturating_multiply_add(std::int64_t value, std::int64_t factor, std::int64_t addend) noexcept {
    return multiply_add(value, factor, addend)
        .value_or(value < 0 ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max());
}

}  // namespace

std::optional<TimestampText> parse_timestamp(std::string_view text) noexcept {
    // The date runs up to the first space or T after its dashes.
    auto const separator = text.find_first_of(" T", 10);
    if (separator == std::string_view::npos || text.size() < separator + 9) {
        return std::nullopt;
    }
    auto const days = parse_days(text.substr(0, separator));
    auto const* clock = text.data() + separator + 1;
    auto const hours = two_digits(clock);
    auto const minutes = two_digits(clock + 3);
    auto const seconds = two_digits(clock + 6);
    if (!days || clock[2] != ':' || clock[5] != ':' || hours < 0 || hours > 23 || minutes < 0 || minutes > 59
        || seconds < 0 || seconds > 59)
    {
        return std::nullopt;
    }
    TimestampText parsed{*days * seconds_per_day + hours * 3600 + minutes * 60 + seconds, 0, 0, false};
    auto rest = text.substr(separator + 9);
    if (rest.starts_with('.')) {
        rest.remove_prefix(1);
        auto const is_digit = [&rest] { return !rest.empty() && static_cast<unsigned>(rest.front() - '0') < 10; };
        while (is_digit() && parsed.fraction_digits < 9) {
            parsed.nanoseconds = parsed.nanoseconds * 10 + static_cast<std::uint32_t>(rest.front() - '0');
            ++parsed.fraction_digits;
            rest.remove_prefix(1);
        }
        if (parsed.fraction_digits == 0 || is_digit()) {
            return std::nullopt;
        }
        for (auto digit = parsed.fraction_digits; digit < 9; ++digit) {
            parsed.nanoseconds *= 10;
        }
    }
    if (rest == "Z") {
        parsed.has_zone = true;
    } else if (rest.starts_with('+') || rest.starts_with('-')) {
        auto const offset = offset_seconds(rest.substr(1));
        if (offset < 0) {
            return std::nullopt;
        }
        parsed.seconds -= rest.front() == '+' ? offset : -offset;
        parsed.has_zone = true;
    } else if (!rest.empty()) {
        return std::nullopt;
    }
    return parsed;
}

std::optional<std::int64_t> timestamp_ticks(TimestampText const& text, DataType type) noexcept {
    auto const per_second = ticks_per_second(type);
    if (per_second == 0 || (text.has_zone && !is_utc_timestamp(type))) {
        return std::nullopt;
    }
    auto const nanoseconds_per_tick = 1'000'000'000 / per_second;
    if (text.nanoseconds % nanoseconds_per_tick != 0) {
        return std::nullopt;
    }
    return multiply_add(text.seconds, per_second, std::int64_t{text.nanoseconds} / nanoseconds_per_tick);
}

std::int64_t timestamp_microseconds(std::int64_t ticks, DataType type) noexcept {
    switch (ticks_per_second(type)) {
        case 1'000: return saturating_multiply_add(ticks, 1'000, 0);
        case 1'000'000'000: return floor_divide(ticks, 1'000).quotient;
        default: return ticks;
    }
}

std::int64_t timestamp_microseconds(TimestampText const& text) noexcept {
    return saturating_multiply_add(text.seconds, 1'000'000, text.nanoseconds / 1'000);
}

std::size_t format_timestamp(std::int64_t ticks, DataType type, char* out) noexcept {
    auto const per_second = ticks_per_second(type);
    auto const [seconds, fraction] = floor_divide(ticks, per_second);
    auto const [days, second_of_day] = floor_divide(seconds, seconds_per_day);
    char* cursor = out + format_civil(to_civil(days), out);
    *cursor++ = ' ';
    auto const clock = {second_of_day / 3600, second_of_day / 60 % 60, second_of_day % 60};
    for (auto const part : clock) {
        *cursor++ = static_cast<char>('0' + part / 10);
        *cursor++ = static_cast<char>('0' + part % 10);
        *cursor++ = ':';
    }
    --cursor;  // the colon after the seconds
    if (fraction != 0) {
        *cursor++ = '.';
        auto const digits = per_second == 1'000 ? 3 : per_second == 1'000'000 ? 6 : 9;
        auto remaining = fraction;
        for (auto digit = digits - 1; digit >= 0; --digit) {
            cursor[digit] = static_cast<char>('0' + remaining % 10);
            remaining /= 10;
        }
        cursor += digits;
    }
    if (is_utc_timestamp(type)) {
        *cursor++ = 'Z';
    }
    return static_cast<std::size_t>(cursor - out);
}

}  // namespace spillway::table
