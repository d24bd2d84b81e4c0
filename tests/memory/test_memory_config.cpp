#include <spillway/memory/memory_config.hpp>

#include <common/error_matchers.hpp>

#include <spillway/core/error.hpp>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::memory;

TEST(MemoryConfig, DefaultsApplyWhenNoOptionIsSet) {
    auto const config = MemoryConfig::from_options(Options{});
    EXPECT_EQ(config.host_limit, SizeSpec::percent(80));
    EXPECT_EQ(config.disk_limit, SizeSpec::percent(100));
    EXPECT_EQ(config.spill_directory, MemoryConfig::default_spill_directory());
    EXPECT_EQ(config.spill_codec, Codec::none);
    EXPECT_TRUE(config.direct_io);
    EXPECT_TRUE(config.pool_host_blocks);
    EXPECT_FALSE(config.force_disk);
    EXPECT_EQ(config.spill_interval, std::chrono::milliseconds(100));
    EXPECT_EQ(config.spill_headroom, 0U);
    EXPECT_EQ(config.reserve_timeout, std::chrono::seconds(30));
    EXPECT_EQ(config.spill_mode, SpillMode::concurrent);
}

TEST(MemoryConfig, ReadsEveryOption) {
    Options options;
    options.set("memory_limit_host", "512MiB");
    options.set("max_spill_bytes", "25%");
    options.set("spill_directory", "/var/tmp/spill");
    options.set("spill_codec", "zstd");
    options.set("spill_direct_io", "off");
    options.set("host_block_pool", "no");
    options.set("spill_force_disk", "yes");
    options.set("spill_interval", "off");
    options.set("spill_headroom", "1GiB");
    options.set("memory_reserve_timeout", "2s");
    auto const config = MemoryConfig::from_options(options);
    EXPECT_EQ(config.host_limit, SizeSpec::bytes(512ULL << 20));
    EXPECT_EQ(config.disk_limit, SizeSpec::percent(25));
    EXPECT_EQ(config.spill_directory, "/var/tmp/spill");
    EXPECT_EQ(config.spill_codec, Codec::zstd);
    EXPECT_FALSE(config.direct_io);
    EXPECT_FALSE(config.pool_host_blocks);
    EXPECT_TRUE(config.force_disk);
    EXPECT_EQ(config.spill_interval, std::chrono::nanoseconds::zero());
    EXPECT_EQ(config.spill_headroom, 1ULL << 30);
    EXPECT_EQ(config.reserve_timeout, std::chrono::seconds(2));
}

TEST(MemoryConfig, EnvironmentVariablesSetOptions) {
    auto const options = Options::from_environment({"SPILLWAY_MEMORY_LIMIT_HOST=75%"});
    EXPECT_EQ(MemoryConfig::from_options(options).host_limit, SizeSpec::percent(75));
}

TEST(MemoryConfig, AValueThatDoesNotParseNamesItsOption) {
    Options options;
    options.set("memory_limit_host", "lots");
    EXPECT_THROW_WITH(MemoryConfig::from_options(options), InvalidArgument, "memory_limit_host");
    options = Options{};
    options.set("spill_codec", "gzip");
    EXPECT_THROW_WITH(MemoryConfig::from_options(options), InvalidArgument, "spill_codec");
}

TEST(MemoryConfig, CodecsParseFromTheirNames) {
    for (auto const codec : {Codec::none, Codec::lz4, Codec::zstd}) {
        EXPECT_EQ(parse_codec(to_string(codec)), codec);
    }
    EXPECT_THROW_WITH(parse_codec("brotli"), InvalidArgument, "expected none, lz4 or zstd");
}
