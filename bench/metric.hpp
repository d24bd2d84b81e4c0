#pragma once
/// @file
/// How every C++ benchmark reports: its headline figures as METRIC lines,
/// and the median of repeated runs.

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <vector>

namespace spillway::bench {

/// Prints a headline figure as `METRIC <name> <value> <unit>`, with six
/// significant digits, and flushes it.
inline void metric(std::string_view name, double value, std::string_view unit) {
    std::printf("METRIC %.*s %.6g %.*s\n", static_cast<int>(name.size()), name.data(), value,
                static_cast<int>(unit.size()), unit.data());
    std::fflush(stdout);
}

/// The median of `values`: the middle one, or the mean of the two middle
/// ones. Requires: not empty.
inline double median(std::vector<double> values) {
    std::ranges::sort(values);
    auto const middle = values.size() / 2;
    return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

}  // namespace spillway::bench
