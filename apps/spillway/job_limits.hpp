#pragma once
/// @file
/// The most ranks and partitions a job takes, on the command line and in
/// the Python package alike, and how a job names the least memory limit
/// that it works in.

#include <cstdint>
#include <cstdio>
#include <string>

namespace spillway::cli {

/// The most ranks (`--ranks`, and in-process ranks in Python).
inline constexpr int max_ranks = 4096;

/// The most partitions (`--partitions`).
inline constexpr std::int64_t max_partitions = std::int64_t{1} << 24;

/// The least memory limit, `bytes`, rounded up to whole MiB and said in
/// MiB at any size (`1035.00 MiB`, where `format_bytes` would round to
/// `1.01 GiB`, which is less), so that it works when typed back.
inline std::string format_least_limit(std::uint64_t bytes) {
    constexpr std::uint64_t mebibyte = std::uint64_t{1} << 20;
    char text[32];
    std::snprintf(text, sizeof text, "%llu.00 MiB",
                  static_cast<unsigned long long>((bytes + mebibyte - 1) / mebibyte));
    return text;
}

}  // namespace spillway::cli
