#include <spillway/comm/mpi_config.hpp>

#include <common/error_matchers.hpp>

#include <chrono>

#include <spillway/core/error.hpp>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::comm;

TEST(MpiConfig, DefaultsApplyWhenNoOptionIsSet) {
    auto const config = MpiConfig::from_options(Options());
    EXPECT_EQ(config.max_message_bytes, std::size_t{1} << 30);
    EXPECT_EQ(config.shutdown_timeout, std::chrono::seconds(60));
}

TEST(MpiConfig, OptionsSetTheMessageSizeAndTheShutdownTimeout) {
    Options options;
    options.set("comm_mpi_max_message_bytes", "64KiB").set("comm_mpi_shutdown_timeout", "5s");
    auto const config = MpiConfig::from_options(options);
    EXPECT_EQ(config.max_message_bytes, 65536U);
    EXPECT_EQ(config.shutdown_timeout, std::chrono::seconds(5));
}

TEST(MpiConfig, AMalformedValueNamesItsOption) {
    Options options;
    options.set("comm_mpi_max_message_bytes", "lots");
    EXPECT_THROW_WITH(MpiConfig::from_options(options), InvalidArgument, "comm_mpi_max_message_bytes");
}
