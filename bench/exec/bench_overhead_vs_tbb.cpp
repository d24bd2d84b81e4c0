// Per-item cost of seq_join with trivial work, against oneTBB's
// parallel_pipeline (serial_in_order -> parallel -> serial_in_order) with
// the same number of live tokens, on 2 threads, in the same run. Also
// compares spillway's ThreadPool with oneTBB as the executor under exec/.

#include <spillway/exec/seq_join.hpp>
#include <spillway/exec/task_group.hpp>
#include <spillway/exec/thread_pool.hpp>

#include <tbb/global_control.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <ranges>
#include <vector>

#include "bench_support.hpp"
#include "tbb_executor.hpp"

using namespace spillway;
using namespace spillway::exec;

namespace {

constexpr int threads = 2;
constexpr std::uint64_t items = 4'000'000;
/// Live tokens of the pipeline, window of seq_join.
constexpr std::size_t window = 1024;
constexpr int rounds = 5;
/// Coroutines and hops per coroutine of the executor comparison.
constexpr int hoppers = 64;
constexpr int hops = 10'000;

/// The trivial work of one item.
std::uint64_t mix(std::uint64_t x) { return (x * 0x9E3779B97F4A7C15ull) ^ (x >> 7); }

/// The sum every run must compute.
std::uint64_t expected_sum() {
    std::uint64_t sum = 0;
    for (std::uint64_t x = 0; x < items; ++x) {
        sum += mix(x);
    }
    return sum;
}

void check(std::uint64_t sum, std::uint64_t expected, char const* what) {
    if (sum != expected) {
        std::fprintf(stderr, "%s computed a wrong checksum\n", what);
        std::exit(1);
    }
}

void tbb_pipeline(tbb::task_arena& arena, std::uint64_t expected) {
    std::uint64_t next = 0;
    std::uint64_t sum = 0;
    arena.execute([&] {
        tbb::parallel_pipeline(
            window,
            tbb::make_filter<void, std::uint64_t>(tbb::filter_mode::serial_in_order,
                                                  [&](tbb::flow_control& control) -> std::uint64_t {
                                                      if (next == items) {
                                                          control.stop();
                                                          return 0;
                                                      }
                                                      return next++;
                                                  })
                & tbb::make_filter<std::uint64_t, std::uint64_t>(tbb::filter_mode::parallel,
                                                                 [](std::uint64_t x) { return mix(x); })
                & tbb::make_filter<std::uint64_t, void>(tbb::filter_mode::serial_in_order,
                                                        [&](std::uint64_t x) { sum += x; }));
    });
    check(sum, expected, "parallel_pipeline");
}

void run_seq_join(Executor& executor, std::size_t grain, std::uint64_t expected) {
    SeqJoinOptions options;
    options.grain = grain;
    std::uint64_t sum = 0;
    for (std::uint64_t x : seq_join(executor, window, std::views::iota(std::uint64_t{0}, items),
                                    [](std::uint64_t item, std::stop_token const&) { return mix(item); }, options))
    {
        sum += x;
    }
    check(sum, expected, "seq_join");
}

/// `hoppers` coroutines that each move to another thread `hops` times: the
/// cost of posting and resuming work through the executor.
void hop(Executor& executor) {
    TaskGroup group(executor);
    for (int i = 0; i < hoppers; ++i) {
        group.spawn([&](std::stop_token const&) -> Task<void> {
            for (int step = 0; step < hops; ++step) {
                co_await executor.schedule();
            }
        });
    }
    group.wait();
}

}  // namespace

int main() {
    // Room for the TbbExecutor's two workers besides this thread.
    tbb::global_control control(tbb::global_control::max_allowed_parallelism, threads + 1);
    tbb::task_arena pipeline_arena(threads);  // this thread and one worker
    ThreadPool pool(ThreadPool::Config{threads});
    bench::TbbExecutor tbb_executor(threads);
    std::uint64_t const expected = expected_sum();

    std::vector<std::size_t> grains;
    for (std::size_t grain = 1; grain <= window / 8; grain *= 4) {
        grains.push_back(grain);
    }
    std::vector<std::function<void()>> bodies{
        [&] { tbb_pipeline(pipeline_arena, expected); },
        [&] { run_seq_join(tbb_executor, 1, expected); },
        [&] { hop(pool); },
        [&] { hop(tbb_executor); },
    };
    for (std::size_t grain : grains) {
        bodies.emplace_back([&, grain] { run_seq_join(pool, grain, expected); });
    }
    std::vector<double> const seconds = bench::fastest_interleaved(rounds, bodies);
    double const tbb = seconds[0];
    double const on_tbb = seconds[1];
    double const pool_hops = seconds[2];
    double const tbb_hops = seconds[3];
    double const grain_one = seconds[4];
    std::size_t best = 4;
    for (std::size_t i = 4; i < seconds.size(); ++i) {
        best = seconds[i] < seconds[best] ? i : best;
    }
    std::size_t const best_grain = grains[best - 4];

    auto const per_item = [](double value) { return value * 1e9 / static_cast<double>(items); };
    auto const per_hop = [](double value) { return value * 1e9 / (double{hoppers} * hops); };
    std::printf("%llu items, window %zu, %d threads, fastest of %d interleaved rounds\n",
                static_cast<unsigned long long>(items), window, threads, rounds);
    std::printf("tbb parallel_pipeline:             %6.1f ns/item\n", per_item(tbb));
    for (std::size_t i = 0; i < grains.size(); ++i) {
        std::printf("seq_join, grain %-4zu                %6.1f ns/item\n", grains[i], per_item(seconds[4 + i]));
    }
    std::printf("seq_join on a TBB arena, grain 1:  %6.1f ns/item\n", per_item(on_tbb));
    std::printf("hops through ThreadPool:           %6.1f ns/hop\n", per_hop(pool_hops));
    std::printf("hops through a TBB arena:          %6.1f ns/hop\n", per_hop(tbb_hops));
    bench::metric("exec_overhead_vs_tbb_grain_1", grain_one / tbb, "ratio");
    bench::metric("exec_overhead_vs_tbb_best_grain", seconds[best] / tbb, "ratio");
    bench::metric("exec_overhead_best_grain", static_cast<double>(best_grain), "items");
    bench::metric("exec_seq_join_pool_vs_tbb_executor", grain_one / on_tbb, "ratio");
    bench::metric("exec_hops_pool_vs_tbb_executor", pool_hops / tbb_hops, "ratio");
    return 0;
}
