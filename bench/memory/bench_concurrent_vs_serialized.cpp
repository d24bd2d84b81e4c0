// concurrent_vs_serialized: the aggregate spill throughput of two threads
// that need HOST headroom at the same time, with the spill manager in its
// concurrent mode against the serialized mode (one exclusive lock, the
// design concurrent spilling replaced), side by side.
//
// Usage: spillway_bench_concurrent_vs_serialized [TOTAL [BUFFER [ROUNDS]]]
//   defaults: 1GiB held in 4 spillable stores of 16MiB buffers, 3 rounds.
// HOST is full; each thread calls reserve_and_spill for half of TOTAL, so
// everything is spilled to disk, by both threads. Rounds alternate the modes.
//
// Headline: codec none, where spilling is bound by the disk, so the gain is
// bounded by how much more the disk takes from two writers than from one;
// that bound is measured too (two raw O_DIRECT writers against one, same
// bytes). The same comparison with the lz4 codec shows the gain where
// spilling also needs CPU.

#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/memory/spillable_store.hpp>

#include "bench_support.hpp"

using namespace spillway;
using namespace spillway::memory;

namespace {

constexpr int store_count = 4;
constexpr int thread_count = 2;

struct Setup {
    std::uint64_t total;
    std::uint64_t buffer_size;
};

/// Spill throughput in GiB/s of `thread_count` threads making room for
/// `total` bytes of HOST that `store_count` stores hold.
double spill_rate(SpillMode mode, Codec codec, Setup const& setup, bench::IncompressibleBytes const& bytes) {
    MemoryConfig config;
    config.host_limit = SizeSpec::bytes(setup.total);
    config.spill_interval = std::chrono::nanoseconds::zero();
    config.spill_mode = mode;
    config.spill_codec = codec;
    BufferResource resource(config);
    auto const stores = bench::filled_stores(resource, store_count, setup.total, setup.buffer_size, bytes);
    std::vector<MemoryReservation> reservations(thread_count);
    std::vector<std::thread> threads;
    bench::Stopwatch const clock;
    for (int t = 0; t < thread_count; ++t) {
        threads.emplace_back([&, t] {
            reservations[t] = resource.reserve_and_spill(MemoryType::HOST, setup.total / thread_count, AllowOverbooking::no);
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    auto const seconds = clock.seconds();
    auto const spilled = resource.statistics().get("memory.spill.bytes")->total;
    SPILLWAY_EXPECTS(spilled >= static_cast<double>(setup.total), "spilled only " << spilled << " bytes", Error);
    return spilled / (1U << 30) / seconds;
}

/// Raw O_DIRECT write throughput in GiB/s of `writers` threads writing
/// `setup.total` bytes together, each its share into a file of its own.
double raw_rate(int writers, Setup const& setup, bench::IncompressibleBytes const& bytes) {
    MemoryConfig config;
    config.spill_interval = std::chrono::nanoseconds::zero();
    BufferResource resource(config);
    std::vector<Buffer> buffers;
    for (std::uint64_t offset = 0, key = 0; offset < setup.total; offset += setup.buffer_size, ++key) {
        buffers.push_back(bytes.make_buffer(resource, setup.buffer_size, key));
    }
    auto const share = buffers.size() / static_cast<std::size_t>(writers);
    std::vector<std::thread> threads;
    bench::Stopwatch const clock;
    for (int w = 0; w < writers; ++w) {
        threads.emplace_back([&, w] {
            auto const mine = std::span<Buffer const>(buffers).subspan(w * share, share);
            bench::raw_write_seconds(resource.spill_directory() / ("raw-" + std::to_string(w)), mine);
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    return static_cast<double>(share * writers * setup.buffer_size) / (1U << 30) / clock.seconds();
}

/// Runs `measure(first)` and `measure(second)` in alternating order for
/// `rounds` rounds; prints the median rates and ratio as METRIC lines.
template <typename Measure>
void compare(
    std::string const& name, std::string const& first_name, std::string const& second_name, int rounds,
    Measure measure
) {
    std::vector<double> ratios;
    std::vector<double> firsts;
    std::vector<double> seconds;
    for (int round = 0; round < rounds; ++round) {
        double first = 0;
        double second = 0;
        if (round % 2 == 0) {
            first = measure(true);
            second = measure(false);
        } else {
            second = measure(false);
            first = measure(true);
        }
        std::cout << "  " << name << " round " << round << ": " << first_name << " " << first << " GiB/s, "
                  << second_name << " " << second << " GiB/s\n";
        ratios.push_back(first / second);
        firsts.push_back(first);
        seconds.push_back(second);
    }
    bench::metric(first_name + "_throughput", bench::median(firsts), "GiB/s");
    bench::metric(second_name + "_throughput", bench::median(seconds), "GiB/s");
    bench::metric(name, bench::median(ratios), "ratio");
}

void run(Setup const& setup, int rounds) {
    std::cout << "concurrent_vs_serialized: " << format_bytes(setup.total) << " in " << store_count
              << " stores of " << format_bytes(setup.buffer_size) << " buffers, " << thread_count << " threads, "
              << rounds << " rounds\n";
    bench::IncompressibleBytes const bytes(setup.buffer_size);
    compare("concurrent_vs_serialized", "spill_concurrent", "spill_serialized", rounds, [&](bool concurrent) {
        return spill_rate(concurrent ? SpillMode::concurrent : SpillMode::serialized, Codec::none, setup, bytes);
    });
    compare("raw_two_writers_vs_one", "raw_two_writers", "raw_one_writer", rounds, [&](bool two) {
        return raw_rate(two ? 2 : 1, setup, bytes);
    });
    compare("concurrent_vs_serialized_lz4", "spill_concurrent_lz4", "spill_serialized_lz4", rounds, [&](bool concurrent) {
        return spill_rate(concurrent ? SpillMode::concurrent : SpillMode::serialized, Codec::lz4, setup, bytes);
    });
}

}  // namespace

int main(int argc, char** argv) {
    return bench::guarded_main("concurrent_vs_serialized", [&] {
        Setup const setup{
            .total = bench::size_argument(argc, argv, 1, std::uint64_t{1} << 30),
            .buffer_size = bench::size_argument(argc, argv, 2, std::uint64_t{16} << 20),
        };
        run(setup, argc > 3 ? std::stoi(argv[3]) : 3);
    });
}
