#include <spillway/memory/memory_config.hpp>

#include <cstdlib>

#include <spillway/core/error.hpp>

namespace spillway::memory {

std::filesystem::path MemoryConfig::default_spill_directory() {
    char const* tmpdir = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): read-only use
    return tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
}

MemoryConfig MemoryConfig::from_options(Options const& options) {
    MemoryConfig config;
    config.host_limit = options.get_size(limit_option(MemoryType::HOST), config.host_limit);
    config.disk_limit = options.get_size(limit_option(MemoryType::DISK), config.disk_limit);
    config.spill_directory =
        options.get_string("spill_directory", config.spill_directory.string());
    config.spill_codec = parse_codec(
        options.get_choice("spill_codec", {"none", "lz4", "zstd"}, std::string(to_string(config.spill_codec)))
    );
    config.direct_io = options.get_bool("spill_direct_io", config.direct_io);
    config.pool_host_blocks = options.get_bool("host_block_pool", config.pool_host_blocks);
    config.force_disk = options.get_bool("spill_force_disk", config.force_disk);
    config.spill_interval = options.get_duration("spill_interval", config.spill_interval);
    config.spill_headroom = options.get_bytes("spill_headroom", config.spill_headroom);
    config.reserve_timeout = options.get_duration("memory_reserve_timeout", config.reserve_timeout);
    SPILLWAY_EXPECTS(config.reserve_timeout > std::chrono::nanoseconds::zero(),
                     Options::describe("memory_reserve_timeout", options.find("memory_reserve_timeout")->source)
                         << ": must be above 0; a request waiting for memory fails after this long without progress",
                     InvalidArgument);
    return config;
}

std::string_view MemoryConfig::limit_option(MemoryType tier) noexcept {
    switch (tier) {
    case MemoryType::HOST:
        return "memory_limit_host";
    case MemoryType::DISK:
        return "max_spill_bytes";
    }
    return "unknown";
}

}  // namespace spillway::memory
