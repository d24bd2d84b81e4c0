#include <spillway/core/options.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <sstream>

#include <spillway/core/ascii_case.hpp>
#include <spillway/core/error.hpp>

extern char** environ;

namespace spillway {
namespace {

constexpr std::string_view environment_prefix = "SPILLWAY_";

std::string_view trim(std::string_view text) {
    auto const is_space = [](unsigned char c) { return std::isspace(c) != 0; };
    while (!text.empty() && is_space(static_cast<unsigned char>(text.front()))) {
        text.remove_prefix(1);
    }
    while (!text.empty() && is_space(static_cast<unsigned char>(text.back()))) {
        text.remove_suffix(1);
    }
    return text;
}

/// A non-negative decimal number followed by a unit, both trimmed.
struct NumberWithUnit {
    double number;
    std::string unit;  ///< lower case
};

std::optional<NumberWithUnit> split_number(std::string_view text) {
    text = trim(text);
    std::size_t end = 0;
    while (end < text.size()
           && (std::isdigit(static_cast<unsigned char>(text[end])) != 0 || text[end] == '.'))
    {
        ++end;
    }
    if (end == 0) {
        return std::nullopt;
    }
    double number = 0;
    auto const [ptr, error] = std::from_chars(text.data(), text.data() + end, number);
    if (error != std::errc{} || ptr != text.data() + end || !std::isfinite(number)) {
        return std::nullopt;
    }
    return NumberWithUnit{number, to_lower(trim(text.substr(end)))};
}

struct Unit {
    std::string_view name;
    double factor;
};

constexpr double kibi = 1024.0;
constexpr std::array<Unit, 14> size_units{{
    {"", 1.0},
    {"b", 1.0},
    {"k", kibi},
    {"kib", kibi},
    {"m", kibi * kibi},
    {"mib", kibi * kibi},
    {"g", kibi * kibi * kibi},
    {"gib", kibi * kibi * kibi},
    {"t", kibi * kibi * kibi * kibi},
    {"tib", kibi * kibi * kibi * kibi},
    {"kb", 1e3},
    {"mb", 1e6},
    {"gb", 1e9},
    {"tb", 1e12},
}};

constexpr std::array<Unit, 7> duration_units{{
    {"ns", 1.0},
    {"us", 1e3},
    {"ms", 1e6},
    {"s", 1e9},
    {"sec", 1e9},
    {"min", 60e9},
    {"h", 3600e9},
}};

template <std::size_t N>
std::optional<double> factor_of(std::array<Unit, N> const& units, std::string_view name) {
    auto const it = std::ranges::find(units, name, &Unit::name);
    if (it == units.end()) {
        return std::nullopt;
    }
    return it->factor;
}

}  // namespace

SizeSpec SizeSpec::percent(double percent) {
    SPILLWAY_EXPECTS(
        percent >= 0.0 && percent <= 100.0,
        "a percentage must be between 0% and 100%, got " << percent << "%",
        InvalidArgument
    );
    return SizeSpec(0, percent / 100.0);
}

std::uint64_t SizeSpec::resolve(std::uint64_t total) const noexcept {
    if (!is_percent()) {
        return bytes_;
    }
    return static_cast<std::uint64_t>(static_cast<long double>(total) * fraction_);
}

std::string SizeSpec::to_string() const {
    if (!is_percent()) {
        return format_bytes(bytes_);
    }
    char text[32];
    std::snprintf(text, sizeof text, "%g%%", fraction_ * 100.0);
    return text;
}

std::uint64_t parse_bytes(std::string_view text, std::string_view what) {
    auto const parsed = split_number(text);
    auto const factor = parsed ? factor_of(size_units, parsed->unit) : std::nullopt;
    SPILLWAY_EXPECTS(
        factor.has_value(),
        what << ": invalid size '" << text
             << "': expected a number with an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, "
                "GB, TB), such as 512MiB",
        InvalidArgument
    );
    SPILLWAY_EXPECTS(*factor != 1 || parsed->number == std::floor(parsed->number),
                     what << ": invalid size '" << text << "': a number of bytes is whole; give a unit (1.5KiB) for "
                                                           "a fraction",
                     InvalidArgument);
    // Rounded as a long double: std::llround's long long overflows past 2^63.
    long double const bytes = std::round(static_cast<long double>(parsed->number) * *factor);
    SPILLWAY_EXPECTS(
        bytes < static_cast<long double>(std::numeric_limits<std::uint64_t>::max()),
        what << ": size '" << text << "' is too large",
        InvalidArgument
    );
    return static_cast<std::uint64_t>(bytes);
}

SizeSpec parse_size(std::string_view text, std::string_view what) {
    auto const trimmed = trim(text);
    if (trimmed.ends_with('%')) {
        auto const parsed = split_number(trimmed.substr(0, trimmed.size() - 1));
        SPILLWAY_EXPECTS(
            parsed && parsed->unit.empty() && parsed->number <= 100.0,
            what << ": invalid percentage '" << text << "': expected a number from 0 to 100 "
                 << "followed by %, such as 75%",
            InvalidArgument
        );
        return SizeSpec::percent(parsed->number);
    }
    return SizeSpec::bytes(parse_bytes(text, what));
}

std::chrono::nanoseconds parse_duration(std::string_view text, std::string_view what) {
    auto const lowered = to_lower(trim(text));
    if (lowered == "0" || lowered == "off") {
        return std::chrono::nanoseconds{0};
    }
    auto const parsed = split_number(lowered);
    auto const factor = parsed ? factor_of(duration_units, parsed->unit) : std::nullopt;
    SPILLWAY_EXPECTS(
        factor.has_value(),
        what << ": invalid duration '" << text
             << "': expected a number with a unit (ns, us, ms, s, min, h), such as 50ms, "
                "or 0/off where the option can be turned off",
        InvalidArgument
    );
    long double const nanoseconds = static_cast<long double>(parsed->number) * *factor;
    SPILLWAY_EXPECTS(
        nanoseconds < static_cast<long double>(std::numeric_limits<std::int64_t>::max()),
        what << ": duration '" << text << "' is too long",
        InvalidArgument
    );
    return std::chrono::nanoseconds{static_cast<std::int64_t>(std::llround(nanoseconds))};
}

bool parse_bool(std::string_view text, std::string_view what) {
    auto const lowered = to_lower(trim(text));
    if (lowered == "1" || lowered == "true" || lowered == "yes" || lowered == "on") {
        return true;
    }
    if (lowered == "0" || lowered == "false" || lowered == "no" || lowered == "off") {
        return false;
    }
    SPILLWAY_FAIL(
        what << ": invalid flag '" << text << "': expected true/false, yes/no, on/off or 1/0",
        InvalidArgument
    );
}

std::string normalized_choice(std::string_view text) { return to_lower(trim(text)); }

std::string format_duration(std::chrono::nanoseconds duration) {
    auto const milliseconds = std::chrono::duration<double, std::milli>(duration).count();
    std::ostringstream text;
    if (milliseconds < 0.5) {
        text << duration.count() << " ns";
    } else if (milliseconds < 999.5) {  // what rounds to 1000 ms is 1.0 s
        text << std::fixed << std::setprecision(0) << milliseconds << " ms";
    } else {
        text << std::fixed << std::setprecision(1) << milliseconds / 1000 << " s";
    }
    return text.str();
}

std::string format_bytes(std::uint64_t bytes) {
    constexpr std::array<char const*, 5> units{"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes < 1024) {
        return std::to_string(bytes) + " B";
    }
    double value = static_cast<double>(bytes) / kibi;
    std::size_t unit = 0;
    while (value >= kibi && unit + 1 < units.size()) {
        value /= kibi;
        ++unit;
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.2f %s", value, units[unit]);
    return text;
}

namespace {

bool is_option_name(std::string_view name) {
    return !name.empty() && std::ranges::all_of(name, [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

/// Adds one `SPILLWAY_NAME=value` entry; other entries, and names that are
/// not option names, are ignored.
void add_environment_entry(Options& options, std::string_view entry) {
    auto const equals = entry.find('=');
    if (!entry.starts_with(environment_prefix) || equals == std::string_view::npos) {
        return;
    }
    auto name = to_lower(entry.substr(environment_prefix.size(), equals - environment_prefix.size()));
    if (is_option_name(name)) {
        options.set(name, std::string(entry.substr(equals + 1)), OptionSource::environment);
    }
}

}  // namespace

Options Options::from_environment() {
    Options options;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
        add_environment_entry(options, *entry);
    }
    return options;
}

Options Options::from_environment(std::initializer_list<char const*> entries) {
    Options options;
    for (char const* entry : entries) {
        add_environment_entry(options, entry);
    }
    return options;
}

Options& Options::set(std::string_view name, std::string value, OptionSource source) {
    SPILLWAY_EXPECTS(
        is_option_name(name),
        "invalid option name '" << name << "': use lower-case letters, digits and '_'",
        InvalidArgument
    );
    auto& entry = values_[std::string(name)];
    entry.values[source] = std::move(value);
    entry.read.set(false);
    return *this;
}

std::optional<Options::Value> Options::find(std::string_view name) const {
    auto const it = values_.find(name);
    if (it == values_.end() || it->second.values.empty()) {
        return std::nullopt;
    }
    it->second.read.set(true);
    // std::map orders sources by precedence: code < command_line < environment.
    auto const& [source, text] = *it->second.values.begin();
    return Value{text, source};
}

std::vector<std::string> Options::unread(OptionSource source) const {
    std::vector<std::string> names;
    for (auto const& [name, entry] : values_) {
        if (!entry.read.read() && entry.values.contains(source)) {
            names.push_back(name);
        }
    }
    return names;
}

void Options::expect_read(OptionSource source, std::string_view reader) const {
    auto const names = unread(source);
    if (names.empty()) {
        return;
    }
    std::string list;
    for (auto const& name : names) {
        list += (list.empty() ? "'" : ", '") + name + "'";
    }
    SPILLWAY_FAIL(reader << " takes no option named " << list
                         << "; docs/configuration.md lists each option and what reads it",
                  InvalidArgument);
}

std::string Options::environment_variable(std::string_view name) {
    std::string variable(environment_prefix);
    for (char const c : name) {
        variable += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return variable;
}

std::string Options::describe(std::string_view name, OptionSource source) {
    std::string text = "option '" + std::string(name) + "'";
    switch (source) {
    case OptionSource::code:
        return text;
    case OptionSource::command_line:
        return text + " (from the command line)";
    case OptionSource::environment:
        return text + " (from environment variable " + environment_variable(name) + ")";
    }
    return text;
}

std::string Options::get_string(std::string_view name, std::string fallback) const {
    auto const value = find(name);
    return value ? value->text : std::move(fallback);
}

std::string Options::get_choice(
    std::string_view name, std::initializer_list<std::string_view> choices, std::string fallback
) const {
    auto const value = find(name);
    if (!value) {
        return fallback;
    }
    auto const lowered = normalized_choice(value->text);
    if (std::ranges::find(choices, lowered) != choices.end()) {
        return lowered;
    }
    std::string list;
    for (auto const choice : choices) {
        list += list.empty() ? "" : ", ";
        list += choice;
    }
    SPILLWAY_FAIL(
        describe(name, value->source) << ": invalid value '" << value->text << "': expected one of "
                                      << list,
        InvalidArgument
    );
}

bool Options::get_bool(std::string_view name, bool fallback) const {
    auto const value = find(name);
    return value ? parse_bool(value->text, describe(name, value->source)) : fallback;
}

std::int64_t Options::get_int(
    std::string_view name, std::int64_t fallback, std::int64_t min, std::int64_t max
) const {
    auto const value = find(name);
    if (!value) {
        return fallback;
    }
    auto const text = trim(value->text);
    std::int64_t result = 0;
    auto const [ptr, error] = std::from_chars(text.data(), text.data() + text.size(), result);
    SPILLWAY_EXPECTS(
        error == std::errc{} && ptr == text.data() + text.size() && result >= min && result <= max,
        describe(name, value->source) << ": invalid value '" << value->text
                                      << "': expected an integer from " << min << " to " << max,
        InvalidArgument
    );
    return result;
}

double Options::get_double(std::string_view name, double fallback, double min, double max) const {
    auto const value = find(name);
    if (!value) {
        return fallback;
    }
    auto const text = trim(value->text);
    double result = 0;
    auto const [ptr, error] = std::from_chars(text.data(), text.data() + text.size(), result);
    SPILLWAY_EXPECTS(
        error == std::errc{} && ptr == text.data() + text.size() && std::isfinite(result) && result >= min
            && result <= max,
        describe(name, value->source) << ": invalid value '" << value->text << "': expected a number from " << min
                                      << " to " << max,
        InvalidArgument
    );
    return result;
}

std::uint64_t Options::get_bytes(std::string_view name, std::uint64_t fallback) const {
    auto const value = find(name);
    return value ? parse_bytes(value->text, describe(name, value->source)) : fallback;
}

SizeSpec Options::get_size(std::string_view name, SizeSpec fallback) const {
    auto const value = find(name);
    return value ? parse_size(value->text, describe(name, value->source)) : fallback;
}

std::chrono::nanoseconds Options::get_duration(
    std::string_view name, std::chrono::nanoseconds fallback
) const {
    auto const value = find(name);
    return value ? parse_duration(value->text, describe(name, value->source)) : fallback;
}

}  // namespace spillway
