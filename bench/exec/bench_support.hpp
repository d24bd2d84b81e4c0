#pragma once
/// @file
/// Timing and reporting shared by the exec/ benchmarks.

#include <chrono>
#include <cstdio>
#include <limits>
#include <string_view>

namespace spillway::bench {

/// Runs `body` `repeats` times and returns the fastest run in seconds: on a
/// shared machine the fastest run is the one least disturbed by other load.
template <typename Body>
double best_of(int repeats, Body&& body) {
    double best = std::numeric_limits<double>::infinity();
    for (int run = 0; run < repeats; ++run) {
        auto const start = std::chrono::steady_clock::now();
        body();
        std::chrono::duration<double> const elapsed = std::chrono::steady_clock::now() - start;
        best = elapsed.count() < best ? elapsed.count() : best;
    }
    return best;
}

/// Prints a headline figure as `METRIC <name> <value> <unit>`.
inline void metric(std::string_view name, double value, std::string_view unit) {
    std::printf("METRIC %.*s %.4g %.*s\n", static_cast<int>(name.size()), name.data(), value,
                static_cast<int>(unit.size()), unit.data());
    std::fflush(stdout);
}

}  // namespace spillway::bench
