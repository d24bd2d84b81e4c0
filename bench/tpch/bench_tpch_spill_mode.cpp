// What the concurrent spill manager gains on real queries: TPC-H Q9 and Q21
// at scale 1 on one rank (2 threads) under a HOST limit of 32 MiB, where
// both spill most of what they shuffle, once with the spill manager
// concurrent and once serialized (one spill at a time, as a single lock
// would make it), interleaved for 2 rounds; the faster run of each counts.
// Prints both times and the bytes each spilled, and
// `tpch_q<N>_concurrent_vs_serialized`: the serialized time over the
// concurrent one (above 1: concurrency helps).

#include <spillway/comm/local_communicator.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/tpch/queries.hpp>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "../exec/bench_support.hpp"

using namespace spillway;

namespace {

constexpr std::uint64_t host_limit = std::uint64_t{32} << 20;
constexpr int rounds = 2;

/// Runs query `number` once on a fresh resource spilling in `mode`; returns
/// the bytes it spilled.
double run_query(int number, table::TpchGenerator const& generator, memory::SpillMode mode) {
    memory::MemoryConfig config;
    config.host_limit = SizeSpec::bytes(host_limit);
    config.spill_mode = mode;
    memory::BufferResource resource(config);
    auto group = comm::LocalCommunicator::make_group(std::vector<memory::BufferResource*>{&resource});
    exec::ThreadPool pool(exec::ThreadPool::Config{.threads = 2});
    tpch::QueryConfig const query_config{.workers = 2, .partitions = 32, .shuffle = {}};
    {
        auto const answer = tpch::run_query(number, *group[0], pool, tpch::generated_tables(generator), query_config);
        if (answer.num_rows() == 0) {
            std::fprintf(stderr, "query %d gave no rows\n", number);
            std::exit(1);
        }
    }
    return resource.statistics().get("memory.copy.host_to_disk.bytes").value_or(Statistics::Entry{}).total;
}

}  // namespace

int main() {
    table::TpchGenerator const generator(1.0);
    std::printf("TPC-H scale 1, 1 rank, 2 threads, HOST limit 32 MiB\n");
    for (int const number : {9, 21}) {
        double spilled_concurrent = 0;
        double spilled_serialized = 0;
        auto const seconds = bench::fastest_interleaved(
            rounds, {[&] { spilled_concurrent = run_query(number, generator, memory::SpillMode::concurrent); },
                     [&] { spilled_serialized = run_query(number, generator, memory::SpillMode::serialized); }}
        );
        std::printf("  Q%d: concurrent %.3f s (spilled %.1f MiB), serialized %.3f s (spilled %.1f MiB)\n", number,
                    seconds[0], spilled_concurrent / (1 << 20), seconds[1], spilled_serialized / (1 << 20));
        bench::metric("tpch_q" + std::to_string(number) + "_concurrent_vs_serialized", seconds[1] / seconds[0],
                      "ratio");
    }
    return 0;
}
