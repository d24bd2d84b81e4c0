#pragma once
/// @file
/// Timing shared by the exec/ benchmarks, and their METRIC output (`metric.hpp`).

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <vector>

#include "metric.hpp"

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

/// Runs each of `bodies` once per round for `rounds` rounds and returns
/// each one's fastest run in seconds. Interleaving the configurations being
/// compared keeps a burst of load from landing on only one of them.
inline std::vector<double> fastest_interleaved(int rounds, std::vector<std::function<void()>> const& bodies) {
    std::vector<double> fastest(bodies.size(), std::numeric_limits<double>::infinity());
    for (int round = 0; round < rounds; ++round) {
        for (std::size_t i = 0; i < bodies.size(); ++i) {
            fastest[i] = std::min(fastest[i], best_of(1, bodies[i]));
        }
    }
    return fastest;
}

}  // namespace spillway::bench
