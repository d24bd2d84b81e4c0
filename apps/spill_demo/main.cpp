// spill_demo: writes more data than the HOST limit allows into a spillable
// store, reads all of it back in order, checks every byte, and prints what
// the memory layer did.
//
// Usage: spill_demo [TOTAL [CHUNK]]   (sizes such as 256MiB and 4MiB)
// Options come from SPILLWAY_* environment variables (docs/configuration.md);
// unless SPILLWAY_MEMORY_LIMIT_HOST is set, HOST is limited to 64 MiB.

#include <chrono>
#include <cstdio>
#include <cstdint>
#include <exception>
#include <iostream>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/spillable_store.hpp>

using namespace spillway;
using namespace spillway::memory;

namespace {

constexpr std::size_t prefetch_depth = 4;

std::byte pattern(std::uint64_t chunk, std::size_t offset) {
    return static_cast<std::byte>((chunk * 131 + offset * 7) >> 3);
}

void run(std::uint64_t total, std::uint64_t chunk_size) {
    auto options = Options::from_environment();
    if (!options.find("memory_limit_host")) {
        options.set("memory_limit_host", "64MiB");
    }
    BufferResource resource(MemoryConfig::from_options(options));
    std::cout << "spill_demo: " << format_bytes(total) << " in chunks of " << format_bytes(chunk_size)
              << ", HOST limit " << format_bytes(resource.memory_limit(MemoryType::HOST)) << ", codec "
              << resource.config().spill_codec << ", spill directory " << resource.spill_directory().string()
              << "\n";

    auto const start = std::chrono::steady_clock::now();
    std::uint64_t const chunks = (total + chunk_size - 1) / chunk_size;
    {
        SpillableStore store(resource, "demo");
        for (std::uint64_t chunk = 0; chunk < chunks; ++chunk) {
            auto const size = std::min(chunk_size, total - chunk * chunk_size);
            auto reservation = resource.reserve_and_spill(MemoryType::HOST, size, AllowOverbooking::no);
            auto buffer = resource.make_buffer(size, reservation);
            auto const data = buffer.data();
            for (std::size_t i = 0; i < data.size(); ++i) {
                data[i] = pattern(chunk, i);
            }
            store.insert(chunk, std::move(buffer));
        }
        std::cout << "  written: " << format_bytes(store.bytes(MemoryType::HOST)) << " in HOST, "
                  << format_bytes(store.bytes(MemoryType::DISK)) << " spilled to DISK\n";

        std::vector<SpillableStore::Key> ahead;
        for (std::uint64_t chunk = 0; chunk < chunks; ++chunk) {
            ahead.clear();
            for (auto next = chunk + 1; next < std::min(chunks, chunk + 1 + prefetch_depth); ++next) {
                ahead.push_back(next);
            }
            store.prefetch(ahead);
            auto const buffer = store.extract(chunk);
            SPILLWAY_EXPECTS(buffer.has_value(), "chunk " << chunk << " is missing", CorruptData);
            auto const data = buffer->data();
            for (std::size_t i = 0; i < data.size(); ++i) {
                SPILLWAY_EXPECTS(data[i] == pattern(chunk, i), "chunk " << chunk << " differs at byte " << i,
                                 CorruptData);
            }
        }
    }
    std::chrono::duration<double> const elapsed = std::chrono::steady_clock::now() - start;
    std::cout << "  read back and verified " << chunks << " chunks in " << elapsed.count() << " s\n"
              << "  peak memory per tier: HOST " << format_bytes(resource.peak_memory_used(MemoryType::HOST))
              << ", DISK " << format_bytes(resource.peak_memory_used(MemoryType::DISK)) << "\n"
              << "  in use now: HOST " << format_bytes(resource.memory_used(MemoryType::HOST)) << ", DISK "
              << format_bytes(resource.memory_used(MemoryType::DISK)) << "\n\n"
              << resource.statistics().report();
}

}  // namespace

int main(int argc, char** argv) {
    try {
        auto const total = argc > 1 ? parse_bytes(argv[1], "TOTAL") : std::uint64_t{256} << 20;
        auto const chunk = argc > 2 ? parse_bytes(argv[2], "CHUNK") : std::uint64_t{4} << 20;
        SPILLWAY_EXPECTS(chunk > 0, "CHUNK must be positive", InvalidArgument);
        run(total, chunk);
        return 0;
    } catch (std::exception const& error) {
        std::cerr << "spill_demo: " << error.what() << "\n";
        return 1;
    }
}
