#include <spillway/core/statistics.hpp>

#include <algorithm>
#include <cstdio>

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
    char text[64];
    switch (unit) {
    case Statistics::Unit::bytes:
        return format_bytes(static_cast<std::uint64_t>(value));
    case Statistics::Unit::seconds:
        std::snprintf(text, sizeof text, "%.3f s", value);
        return text;
    case Statistics::Unit::count:
        std::snprintf(text, sizeof text, "%.0f", value);
        return text;
    }
    return {};
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
    entry.max = std::max(entry.max, value);
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
    std::string text;
    char line[256];
    std::snprintf(line, sizeof line, "%-*s %16s %10s %16s\n", static_cast<int>(width), "name",
                  "total", "records", "max");
    text += line;
    for (auto const& [name, entry] : entries) {
        std::snprintf(line, sizeof line, "%-*s %16s %10llu %16s\n", static_cast<int>(width),
                      name.c_str(), format_value(entry.total, entry.unit).c_str(),
                      static_cast<unsigned long long>(entry.records),
                      format_value(entry.max, entry.unit).c_str());
        text += line;
    }
    return text;
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
    return json.dump();
}

}  // namespace spillway
