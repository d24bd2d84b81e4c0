// 20,000 items that each wait 200 us on a timer (simulated I/O), with a
// window of 1, 64 and 1024 on 2 threads: throughput relative to window 1.
// A waiting item holds no thread, so a wider window overlaps the waits.

#include <spillway/exec/seq_join.hpp>
#include <spillway/exec/thread_pool.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ranges>
#include <vector>

#include "bench_support.hpp"

using namespace spillway;
using namespace spillway::exec;
using namespace std::chrono_literals;

namespace {

constexpr int threads = 2;
constexpr std::size_t items = 20'000;
constexpr std::chrono::microseconds io = 200us;
constexpr int rounds = 2;

/// Runs the items through a join with `window`; checks their order.
void run(ThreadPool& pool, std::size_t window) {
    std::size_t expected = 0;
    for (std::size_t item : seq_join(pool, window, std::views::iota(std::size_t{0}, items),
                                     [&pool](std::size_t index, std::stop_token const& stop) -> Task<std::size_t> {
                                         co_await pool.sleep_for(io, stop);
                                         co_return index;
                                     }))
    {
        if (item != expected++) {
            std::fprintf(stderr, "results out of order\n");
            std::exit(1);
        }
    }
}

}  // namespace

int main() {
    ThreadPool pool(ThreadPool::Config{threads});
    // Window 1 takes items * io at least, so few rounds.
    std::vector<double> const seconds = bench::fastest_interleaved(
        rounds, {[&] { run(pool, 1); }, [&] { run(pool, 64); }, [&] { run(pool, 1024); }});
    double const serial = seconds[0];
    double const window_64 = seconds[1];
    double const window_1024 = seconds[2];
    std::printf("%zu items waiting %lld us each on %d threads\n", items, static_cast<long long>(io.count()), threads);
    std::printf("window 1:    %.3f s (%.0f us/item)\n", serial, serial * 1e6 / items);
    std::printf("window 64:   %.3f s\n", window_64);
    std::printf("window 1024: %.3f s (ideal %.3f s)\n", window_1024,
                std::chrono::duration<double>(io).count() * items / 1024);
    bench::metric("exec_async_window_64", serial / window_64, "ratio");
    bench::metric("exec_async_window_1024", serial / window_1024, "ratio");
    return 0;
}
