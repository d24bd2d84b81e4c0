#include "run_summary.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <sstream>
#include <string_view>

#include <spillway/core/options.hpp>

namespace spillway::cli {
namespace {

/// `12.3 s` or `850 ms`.
std::string format_seconds(double seconds) {
    char text[32];
    if (seconds < 1.0) {
        std::snprintf(text, sizeof text, "%.0f ms", seconds * 1e3);
    } else {
        std::snprintf(text, sizeof text, "%.1f s", seconds);
    }
    return text;
}

/// `1234567` as `1,234,567`.
std::string format_count(std::uint64_t count) {
    auto const digits = std::to_string(count);
    std::string grouped;
    for (std::size_t index = 0; index < digits.size(); ++index) {
        if (index != 0 && (digits.size() - index) % 3 == 0) {
            grouped += ',';
        }
        grouped += digits[index];
    }
    return grouped;
}

/// A setting as people read it: its name and value, strings without quotes,
/// and sizes (named with `RunSummary::bytes_suffix`) formatted, without the
/// suffix.
std::string format_setting(std::string const& name, nlohmann::ordered_json const& value) {
    std::string_view const suffix = RunSummary::bytes_suffix;
    if (name.ends_with(suffix) && value.is_number_unsigned()) {
        return name.substr(0, name.size() - suffix.size()) + " " + format_bytes(value.get<std::uint64_t>());
    }
    return name + " " + (value.is_string() ? value.get<std::string>() : value.dump());
}

/// `json` on one line, with bytes that are not UTF-8 (file names need not
/// be) replaced.
std::string one_line(nlohmann::ordered_json const& json) {
    return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

double RunSummary::throughput() const noexcept {
    return seconds > 0 ? static_cast<double>(bytes) / seconds : 0.0;
}

std::string RunSummary::verification_error() const {
    if (verified.value_or(true)) {
        return {};
    }
    std::string error = "verification failed:";
    char const* separator = " ";
    for (auto const& line : verification) {
        error += separator + line;
        separator = "; ";
    }
    return error;
}

std::string RunSummary::answer_text() const {
    std::ostringstream out;
    if (answer) {
        char const* separator = "";
        for (auto const& column : answer->columns) {
            out << separator << column;
            separator = " | ";
        }
        out << "\n";
        for (auto const& row : answer->rows) {
            separator = "";
            for (auto const& value : row) {
                out << separator << (value.is_string() ? value.get<std::string>() : value.dump());
                separator = " | ";
            }
            out << "\n";
        }
    }
    return out.str();
}

std::string RunSummary::to_text() const {
    std::ostringstream out;
    out << answer_text() << "spillway " << command;
    if (verified) {
        out << ": " << (*verified ? "verified" : "VERIFICATION FAILED");
    }
    out << "\n";
    if (!settings.empty()) {
        out << "  settings     ";
        char const* separator = "";
        for (auto const& [name, value] : settings.items()) {
            out << separator << format_setting(name, value);
            separator = ", ";
        }
        out << "\n";
    }
    out << "  rows         " << format_count(rows) << "\n";
    if (skipped_rows) {
        out << "  skipped      " << format_count(*skipped_rows) << " rows with the wrong number of fields\n";
    }
    out        << "  bytes        " << format_bytes(bytes) << "\n"
        << "  time         " << format_seconds(seconds);
    if (!phases.empty()) {
        out << " (";
        char const* separator = "";
        for (auto const& phase : phases) {
            out << separator << phase.name << " " << format_seconds(phase.seconds);
            separator = ", ";
        }
        out << ")";
    }
    out << "\n"
        << "  throughput   " << format_bytes(static_cast<std::uint64_t>(throughput())) << "/s\n";
    if (!peak_memory.empty()) {
        out << "  spilled      " << format_bytes(spilled_bytes) << ", read back " << format_bytes(read_back_bytes)
            << "\n";
    }
    if (sent_bytes) {
        out << "  sent         " << format_bytes(*sent_bytes) << " to other ranks\n";
    }
    for (auto const& peak : peak_memory) {
        auto const highest = peak.ranks.empty() ? 0 : *std::max_element(peak.ranks.begin(), peak.ranks.end());
        auto const together = std::accumulate(peak.ranks.begin(), peak.ranks.end(), std::uint64_t{0});
        out << "  peak " << peak.tier << (peak.tier.size() < 4 ? " " : "") << "    " << format_bytes(highest)
            << " on the busiest rank (limit " << format_bytes(peak.limit) << " per rank)";
        if (peak.ranks.size() > 1) {
            out << ", " << format_bytes(together) << " over " << peak.ranks.size() << " ranks";
        }
        if (highest > peak.limit) {
            out << "; over the limit where nothing could spill";
        }
        out << "\n";
    }
    out << "  peak RSS     " << format_bytes(peak_resident_bytes) << "\n";
    for (auto const& line : verification) {
        out << "  " << line << "\n";
    }
    return out.str();
}

std::string RunSummary::to_json(ExitCode code, std::string const& error) const {
    nlohmann::ordered_json json;
    json["command"] = command;
    json["verified"] = verified ? nlohmann::ordered_json(*verified) : nlohmann::ordered_json(nullptr);
    json["exit_code"] = to_int(code);
    if (!error.empty()) {
        json["error"] = error;
    }
    if (answer) {
        json["columns"] = answer->columns;
    }
    json["settings"] = settings;
    json["rows"] = answer ? answer->rows : nlohmann::ordered_json(rows);
    if (answer) {
        json["rows_read"] = rows;
    }
    if (skipped_rows) {
        json["skipped_rows"] = *skipped_rows;
    }
    json["bytes"] = bytes;
    json["seconds"] = seconds;
    json["throughput_bytes_per_second"] = throughput();
    auto& phase_times = json["phases"] = nlohmann::ordered_json::object();
    for (auto const& phase : phases) {
        phase_times[phase.name] = phase.seconds;
    }
    json["spilled_bytes"] = spilled_bytes;
    json["read_back_bytes"] = read_back_bytes;
    if (sent_bytes) {
        json["sent_bytes"] = *sent_bytes;
    }
    auto& peaks = json["peak_memory"] = nlohmann::ordered_json::object();
    for (auto const& peak : peak_memory) {
        peaks[peak.tier] = {{"limit", peak.limit}, {"ranks", peak.ranks}};
    }
    json["peak_resident_bytes"] = peak_resident_bytes;
    json["verification"] = verification;
    return one_line(json);
}

std::string failure_json(std::string const& command, ExitCode code, std::string const& error) {
    nlohmann::ordered_json json;
    if (!command.empty()) {
        json["command"] = command;
    }
    json["verified"] = false;
    json["exit_code"] = to_int(code);
    json["error"] = error;
    return one_line(json);
}

std::uint64_t peak_resident_bytes() noexcept {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // ru_maxrss is in KiB on Linux
}

}  // namespace spillway::cli
