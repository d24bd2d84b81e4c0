#pragma once
/// @file
/// The most ranks and partitions a job takes, on the command line and in
/// the Python package alike.

#include <cstdint>

namespace spillway::cli {

/// The most ranks (`--ranks`, and in-process ranks in Python).
inline constexpr int max_ranks = 4096;

/// The most partitions (`--partitions`).
inline constexpr std::int64_t max_partitions = std::int64_t{1} << 24;

}  // namespace spillway::cli
