// 100,000 records, each a CPU-bound computation of about 20 us in four
// steps: a sequential loop against seq_join on 2 threads, in the same run.

#include <spillway/exec/seq_join.hpp>
#include <spillway/exec/thread_pool.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ranges>
#include <vector>

#include "bench_support.hpp"

using namespace spillway;
using namespace spillway::exec;

namespace {

constexpr int threads = 2;
constexpr std::uint64_t records = 100'000;
constexpr int steps = 4;
constexpr std::chrono::microseconds cost_per_record{20};
constexpr std::size_t window = 64;
constexpr int repeats = 3;

/// One step of a record: `rounds` rounds of integer mixing.
std::uint64_t step(std::uint64_t state, std::uint64_t rounds) {
    for (std::uint64_t round = 0; round < rounds; ++round) {
        state = (state ^ (state >> 31)) * 0xBF58476D1CE4E5B9ull + round;
    }
    return state;
}

std::uint64_t process(std::uint64_t record, std::uint64_t rounds) {
    std::uint64_t state = record;
    for (int i = 0; i < steps; ++i) {
        state = step(state + static_cast<std::uint64_t>(i), rounds);
    }
    return state;
}

/// Rounds per step that make one record cost about `cost_per_record` here.
std::uint64_t calibrate() {
    constexpr std::uint64_t probe_rounds = 1000;
    constexpr std::uint64_t probe_records = 2000;
    std::uint64_t sink = 0;
    double const seconds = bench::best_of(3, [&] {
        for (std::uint64_t record = 0; record < probe_records; ++record) {
            sink += process(record, probe_rounds);
        }
    });
    double const per_record = seconds / static_cast<double>(probe_records);
    std::printf("calibration checksum %llu\n", static_cast<unsigned long long>(sink));
    return static_cast<std::uint64_t>(probe_rounds * std::chrono::duration<double>(cost_per_record).count() / per_record);
}

}  // namespace

int main() {
    std::uint64_t const rounds = calibrate();
    ThreadPool pool(ThreadPool::Config{threads});
    std::uint64_t sequential_sum = 0;
    std::uint64_t parallel_sum = 0;
    std::vector<double> const seconds = bench::fastest_interleaved(
        repeats, {[&] {
                      sequential_sum = 0;
                      for (std::uint64_t record = 0; record < records; ++record) {
                          sequential_sum += process(record, rounds);
                      }
                  },
                  [&] {
                      parallel_sum = 0;
                      for (std::uint64_t result : seq_join(pool, window, std::views::iota(std::uint64_t{0}, records),
                                                           [rounds](std::uint64_t record, std::stop_token const&) {
                                                               return process(record, rounds);
                                                           }))
                      {
                          parallel_sum += result;
                      }
                  }});
    double const sequential = seconds[0];
    double const parallel = seconds[1];
    if (parallel_sum != sequential_sum) {
        std::fprintf(stderr, "seq_join computed a different checksum than the loop\n");
        return 1;
    }
    std::printf("%llu records of %lld us on %d threads, window %zu\n", static_cast<unsigned long long>(records),
                static_cast<long long>(cost_per_record.count()), threads, window);
    std::printf("sequential loop: %.3f s (%.1f us/record)\n", sequential, sequential * 1e6 / records);
    std::printf("seq_join:        %.3f s\n", parallel);
    bench::metric("exec_speedup_2_threads", sequential / parallel, "ratio");
    return 0;
}
