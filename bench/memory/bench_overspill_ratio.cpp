// overspill_ratio: bytes spilled divided by bytes needed when many threads
// find HOST short at the same moment. The ideal is 1.0; without counting
// the bytes other callers are already spilling, N callers of one headroom
// request would spill up to N times what is needed.
//
// Usage: spillway_bench_overspill_ratio [HOLD [BUFFER [THREADS [ROUNDS]]]]
//   defaults: 512MiB held in 4 spillable stores of 1MiB buffers, 8 threads,
//   5 rounds of each scenario.
// Scenarios, each started by all threads at once from a barrier, with sizes
// that are not multiples of BUFFER (so victims overshoot a little):
// - reservations: every thread reserve_and_spill()s about HOLD / (2 * THREADS);
//   needed = the sum of the requests.
// - shared headroom: every thread asks spill_to_make_headroom() for about
//   HOLD / 4; needed = that, once.
// - naive shared headroom, the baseline: every thread computes what is
//   missing itself and calls spill() for it, as a caller without
//   spill_to_make_headroom would.
// The worst ratio over the rounds is reported; overspill_ratio is the worse
// of the first two.

#include <iostream>
#include <latch>
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

struct Setup {
    std::uint64_t hold;
    std::uint64_t buffer_size;
    int threads;
};

enum class Scenario { reservations, shared_headroom, naive_shared_headroom };

/// Spilled / needed for one run of `scenario`.
double overspill(Scenario scenario, Setup const& setup, bench::BenchBytes const& bytes) {
    MemoryConfig config;
    config.host_limit = SizeSpec::bytes(setup.hold);
    config.spill_interval = std::chrono::nanoseconds::zero();
    BufferResource resource(config);
    auto const stores = bench::filled_stores(resource, store_count, setup.hold, setup.buffer_size, bytes);
    auto const request = setup.hold / (2 * static_cast<std::uint64_t>(setup.threads)) - setup.buffer_size / 3;
    auto const headroom = setup.hold / 4 - setup.buffer_size / 3;
    std::latch start(setup.threads);
    std::vector<MemoryReservation> reservations(static_cast<std::size_t>(setup.threads));
    std::vector<std::thread> threads;
    for (int t = 0; t < setup.threads; ++t) {
        threads.emplace_back([&, t] {
            start.arrive_and_wait();
            switch (scenario) {
            case Scenario::reservations:
                reservations[t] = resource.reserve_and_spill(MemoryType::HOST, request, AllowOverbooking::no);
                break;
            case Scenario::shared_headroom:
                resource.spill_manager().spill_to_make_headroom(headroom);
                break;
            case Scenario::naive_shared_headroom: {
                auto const missing = static_cast<std::int64_t>(headroom) - resource.memory_available(MemoryType::HOST);
                resource.spill_manager().spill(static_cast<std::size_t>(std::max<std::int64_t>(missing, 0)));
                break;
            }
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    auto const needed = scenario == Scenario::reservations ? request * setup.threads : headroom;
    return resource.statistics().get("memory.spill.bytes")->total / static_cast<double>(needed);
}

void run(Setup const& setup, int rounds) {
    std::cout << "overspill_ratio: " << format_bytes(setup.hold) << " held in " << store_count << " stores of "
              << format_bytes(setup.buffer_size) << " buffers, " << setup.threads << " threads, " << rounds
              << " rounds\n";
    bench::BenchBytes const bytes(setup.buffer_size);
    double worst_reservations = 0;
    double worst_headroom = 0;
    double worst_naive = 0;
    for (int round = 0; round < rounds; ++round) {
        auto const reservations = overspill(Scenario::reservations, setup, bytes);
        auto const headroom = overspill(Scenario::shared_headroom, setup, bytes);
        auto const naive = overspill(Scenario::naive_shared_headroom, setup, bytes);
        std::cout << "  round " << round << ": reservations " << reservations << ", shared headroom " << headroom
                  << ", naive shared headroom " << naive << "\n";
        worst_reservations = std::max(worst_reservations, reservations);
        worst_headroom = std::max(worst_headroom, headroom);
        worst_naive = std::max(worst_naive, naive);
    }
    bench::metric("overspill_ratio_reservations", worst_reservations, "ratio");
    bench::metric("overspill_ratio_shared_headroom", worst_headroom, "ratio");
    bench::metric("overspill_ratio_naive_shared_headroom", worst_naive, "ratio");
    bench::metric("overspill_ratio", std::max(worst_reservations, worst_headroom), "ratio");
}

}  // namespace

int main(int argc, char** argv) {
    return bench::guarded_main("overspill_ratio", [&] {
        Setup const setup{
            .hold = bench::size_argument(argc, argv, 1, std::uint64_t{512} << 20),
            .buffer_size = bench::size_argument(argc, argv, 2, std::uint64_t{1} << 20),
            .threads = argc > 3 ? std::stoi(argv[3]) : 8,
        };
        SPILLWAY_EXPECTS(setup.threads > 0, "THREADS must be positive", InvalidArgument);
        run(setup, argc > 4 ? std::stoi(argv[4]) : 5);
    });
}
