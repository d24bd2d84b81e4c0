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
// bytes). The same comparison with the zstd codec on compressible data (a
// quarter of TOTAL) shows the gain where spilling is bound by CPU rather than
// by the disk; its bound is measured too (two threads of fixed CPU work
// against one, which on a shared machine shows the cores actually free).

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
double spill_rate(SpillMode mode, Codec codec, Setup const& setup, bench::BenchBytes const& bytes) {
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
double raw_rate(int writers, Setup const& setup, bench::BenchBytes const& bytes) {
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

/// Units of CPU work per second done by `threads` threads, each doing the
/// same fixed amount.
double cpu_rate(int threads) {
    constexpr std::uint64_t steps = std::uint64_t{200} << 20;
    std::vector<std::thread> workers;
    std::atomic<std::uint64_t> sink{0};
    bench::Stopwatch const clock;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&sink, t] {
            auto x = static_cast<std::uint64_t>(t) + 1;
            for (std::uint64_t i = 0; i < steps; ++i) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            }
            sink.fetch_add(x, std::memory_order_relaxed);  // relaxed: only keeps the loop alive
        });
    }
    for (auto& worker : workers) {
        worker.join();
    }
    return threads / clock.seconds();
}

/// Runs `measure(true)` (first) and `measure(false)` (second) in alternating
/// order for `rounds` rounds; prints the median rates, in `unit`, and the
/// median ratio as METRIC lines.
template <typename Measure>
void compare(
    std::string const& name, std::string const& first_name, std::string const& second_name, int rounds,
    Measure measure, std::string_view unit = "GiB/s"
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
        std::cout << "  " << name << " round " << round << ": " << first_name << " " << first << ", "
                  << second_name << " " << second << "\n";
        ratios.push_back(first / second);
        firsts.push_back(first);
        seconds.push_back(second);
    }
    bench::metric(first_name + "_throughput", bench::median(firsts), unit);
    bench::metric(second_name + "_throughput", bench::median(seconds), unit);
    bench::metric(name, bench::median(ratios), "ratio");
}

void run(Setup const& setup, int rounds) {
    std::cout << "concurrent_vs_serialized: " << format_bytes(setup.total) << " in " << store_count
              << " stores of " << format_bytes(setup.buffer_size) << " buffers, " << thread_count << " threads, "
              << rounds << " rounds\n";
    bench::BenchBytes const bytes(setup.buffer_size);
    compare("concurrent_vs_serialized", "spill_concurrent", "spill_serialized", rounds, [&](bool concurrent) {
        return spill_rate(concurrent ? SpillMode::concurrent : SpillMode::serialized, Codec::none, setup, bytes);
    });
    compare("raw_two_writers_vs_one", "raw_two_writers", "raw_one_writer", rounds, [&](bool two) {
        return raw_rate(two ? 2 : 1, setup, bytes);
    });
    bench::BenchBytes const compressible(setup.buffer_size, true);
    Setup const quarter{.total = setup.total / 4, .buffer_size = setup.buffer_size};
    compare("concurrent_vs_serialized_zstd", "spill_concurrent_zstd", "spill_serialized_zstd", rounds, [&](bool concurrent) {
        return spill_rate(concurrent ? SpillMode::concurrent : SpillMode::serialized, Codec::zstd, quarter, compressible);
    });
    compare(
        "cpu_two_threads_vs_one", "cpu_two_threads", "cpu_one_thread", rounds,
        [&](bool two) { return cpu_rate(two ? 2 : 1); }, "work/s"
    );
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
