#include <spillway/core/statistics.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>

namespace spillway {
namespace {

char const* unit_name(Statistics::Unit unit) {
    switch (unit) {
    case Statistics::Unit::count:
        return "count";
    case Statistics::Unit::bytes:
        return "bytes";
    case Statistics::Unit::seconds:
        return "seconds";
    }
    return "count";
}

std::string format_value(double value, Statistics::Unit unit) {
    if (unit == Statistics::Unit::bytes) {
        auto const bytes = format_bytes(static_cast<std::uint64_t>(std::fabs(value)));
        return value < 0 ? "-" + bytes : bytes;
    }
    std::ostringstream text;
    auto const seconds = unit == Statistics::Unit::seconds;
    text << std::fixed << std::setprecision(seconds ? 3 : 0) << value << (seconds ? " s" : "");
    return text.str();
}

}  // namespace

void Statistics::record(std::string_view name, double value, Unit unit) {
    MutexLock lock(mutex_);
    auto it = entries_.find(name);
    if (it == entries_.end()) {
        it = entries_.emplace(std::string(name), Entry{.unit = unit}).first;
    }
    Entry& entry = it->second;
    SPILLWAY_EXPECTS(
        entry.unit == unit,
        "statistic '" << name << "' holds " << unit_name(entry.unit) << ", cannot record "
                      << unit_name(unit),
        InvalidArgument
    );
    entry.records += 1;
    entry.total += value;
    entry.max = entry.records == 1 ? value : std::max(entry.max, value);
}

std::optional<Statistics::Entry> Statistics::get(std::string_view name) const {
    MutexLock lock(mutex_);
    auto const it = entries_.find(name);
    if (it == entries_.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::map<std::string, Statistics::Entry, std::less<>> Statistics::snapshot() const {
    MutexLock lock(mutex_);
    return entries_;
}

void Statistics::clear() {
    MutexLock lock(mutex_);
    entries_.clear();
}

std::string Statistics::report() const {
    auto const entries = snapshot();
    std::size_t width = 4;
    for (auto const& [name, entry] : entries) {
        width = std::max(width, name.size());
    }
    std::ostringstream text;
    auto const line = [&](std::string_view name, std::string_view total, std::string_view records,
                          std::string_view max) {
        text << std::left << std::setw(static_cast<int>(width)) << name << std::right << ' ' << std::setw(16)
             << total << ' ' << std::setw(10) << records << ' ' << std::setw(16) << max << '\n';
    };
    line("name", "total", "records", "max");
    for (auto const& [name, entry] : entries) {
        line(name, format_value(entry.total, entry.unit), std::to_string(entry.records),
             format_value(entry.max, entry.unit));
    }
    return text.str();
}

std::string Statistics::to_json() const {
    nlohmann::json json = nlohmann::json::object();
    for (auto const& [name, entry] : snapshot()) {
        json[name] = {
            {"unit", unit_name(entry.unit)},
            {"records", entry.records},
            {"total", entry.total},
            {"max", entry.max},
        };
    }
    return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace spillway
