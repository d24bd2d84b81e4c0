#include <cstdint>

#include <gtest/gtest.h>

#include <spillway/core/options.hpp>

#include "job_limits.hpp"

using namespace spillway;
using namespace spillway::cli;

namespace {
constexpr std::uint64_t mib = std::uint64_t{1} << 20;
}  // namespace

TEST(JobLimits, TheLeastLimitIsSaidInWholeMebibytesThatWorkWhenTypedBack) {
    EXPECT_EQ(format_least_limit(164 * mib), "164.00 MiB");
    EXPECT_EQ(format_least_limit(1035 * mib), "1035.00 MiB") << "not 1.01 GiB, which is less";
    EXPECT_EQ(format_least_limit(1035 * mib + 1), "1036.00 MiB") << "rounded up";
    EXPECT_EQ(parse_bytes(format_least_limit(1035 * mib), "--memory-limit"), 1035 * mib);
}
