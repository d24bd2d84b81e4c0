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
#include <ranges>

#include "bench_support.hpp"
#include "tbb_executor.hpp"

using namespace spillway;
using namespace spillway::exec;

namespace {

constexpr int threads = 2;
constexpr std::uint64_t items = 2'000'000;
/// Live tokens of the pipeline, window of seq_join.
constexpr std::size_t window = 1024;
constexpr int repeats = 5;
/// Coroutines and hops per coroutine of the executor comparison.
constexpr int hoppers = 64;
constexpr int hops = 20'000;

/// The trivial work of one item.
std::uint64_t mix(std::uint64_t x) { return (x * 0x9E3779B97F4A7C15ull) ^ (x >> 7); }

std::uint64_t checksum = 0;

double tbb_pipeline_seconds() {
    tbb::task_arena arena(threads);  // one slot for this thread, one for a worker
    return bench::best_of(repeats, [&] {
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
        checksum = sum;
    });
}

double seq_join_seconds(Executor& executor, std::size_t grain) {
    std::uint64_t const expected = checksum;
    return bench::best_of(repeats, [&] {
        SeqJoinOptions options;
        options.grain = grain;
        std::uint64_t sum = 0;
        for (std::uint64_t x : seq_join(executor, window, std::views::iota(std::uint64_t{0}, items),
                                        [](std::uint64_t item, std::stop_token const&) { return mix(item); },
                                        options))
        {
            sum += x;
        }
        if (sum != expected) {
            std::fprintf(stderr, "seq_join computed a different checksum than the pipeline\n");
            std::exit(1);
        }
    });
}

/// `hoppers` coroutines that each move to another thread `hops` times: the
/// cost of posting and resuming work through the executor.
double hop_seconds(Executor& executor) {
    return bench::best_of(repeats, [&] {
        TaskGroup group(executor);
        for (int i = 0; i < hoppers; ++i) {
            group.spawn([&](std::stop_token const&) -> Task<void> {
                for (int hop = 0; hop < hops; ++hop) {
                    co_await executor.schedule();
                }
            });
        }
        group.wait();
    });
}

}  // namespace

int main() {
    // Room for the TbbExecutor's two workers besides this thread.
    tbb::global_control control(tbb::global_control::max_allowed_parallelism, threads + 1);
    ThreadPool pool(ThreadPool::Config{threads});
    bench::TbbExecutor tbb_executor(threads);

    double const tbb = tbb_pipeline_seconds();
    double const grain_one = seq_join_seconds(pool, 1);
    std::size_t best_grain = 1;
    double best = grain_one;
    for (std::size_t grain = 2; grain <= window / 4; grain *= 2) {
        double const seconds = seq_join_seconds(pool, grain);
        if (seconds < best) {
            best = seconds;
            best_grain = grain;
        }
    }
    double const on_tbb = seq_join_seconds(tbb_executor, 1);
    double const pool_hops = hop_seconds(pool);
    double const tbb_hops = hop_seconds(tbb_executor);

    auto const per_item = [](double seconds) { return seconds * 1e9 / static_cast<double>(items); };
    auto const per_hop = [](double seconds) { return seconds * 1e9 / (double{hoppers} * hops); };
    std::printf("%llu items, window %zu, %d threads\n", static_cast<unsigned long long>(items), window, threads);
    std::printf("tbb parallel_pipeline:          %7.1f ns/item\n", per_item(tbb));
    std::printf("seq_join, grain 1:              %7.1f ns/item\n", per_item(grain_one));
    std::printf("seq_join, grain %-3zu (best):      %7.1f ns/item\n", best_grain, per_item(best));
    std::printf("seq_join on a TBB arena, grain 1: %5.1f ns/item\n", per_item(on_tbb));
    std::printf("hops through ThreadPool:        %7.1f ns/hop\n", per_hop(pool_hops));
    std::printf("hops through a TBB arena:       %7.1f ns/hop\n", per_hop(tbb_hops));
    bench::metric("exec_overhead_vs_tbb_grain_1", grain_one / tbb, "ratio");
    bench::metric("exec_overhead_vs_tbb_best_grain", best / tbb, "ratio");
    bench::metric("exec_overhead_best_grain", static_cast<double>(best_grain), "items");
    bench::metric("exec_seq_join_pool_vs_tbb_executor", grain_one / on_tbb, "ratio");
    bench::metric("exec_hops_pool_vs_tbb_executor", pool_hops / tbb_hops, "ratio");
    return 0;
}
