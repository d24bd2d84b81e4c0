// spill_write_vs_raw: the disk tier's spill throughput against the physical
// limit, a raw aligned O_DIRECT write of the same bytes to the same file
// system, measured side by side.
//
// Usage: spillway_bench_spill_write_vs_raw [TOTAL [BUFFER [ROUNDS]]]
//   defaults: 2GiB of incompressible data in 64MiB buffers, 5 rounds.
// The spill goes through SpillableStore::spill (victim choice, DISK
// reservation, frame header, checksum, file per buffer); the baseline writes
// the buffers one after another into one file. Both write new files in the
// first round and over their files of the round before in the others (the
// disk tier keeps freed spill files to write over them). Rounds alternate
// which goes first; the median of the per-round ratios is reported.

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/memory/spillable_store.hpp>

#include "bench_support.hpp"

using namespace spillway;
using namespace spillway::memory;

namespace {

/// Seconds for the store to spill every buffer in `buffers`; afterwards the
/// buffers are read back into `buffers` (not timed).
double spill_seconds(BufferResource& resource, std::vector<Buffer>& buffers) {
    SpillableStore store(resource, "bench");
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < buffers.size(); ++i) {
        total += buffers[i].size();
        store.insert(i, std::move(buffers[i]));
    }
    buffers.clear();
    bench::Stopwatch const clock;
    auto const spilled = store.spill(total);
    auto const seconds = clock.seconds();
    SPILLWAY_EXPECTS(spilled == total, "spilled " << spilled << " of " << total << " bytes", Error);
    while (auto item = store.extract_first()) {
        buffers.push_back(std::move(item->second));
    }
    return seconds;
}

void run(std::uint64_t total, std::uint64_t buffer_size, int rounds) {
    MemoryConfig config;
    config.host_limit = SizeSpec::bytes(2 * total + buffer_size);
    config.spill_interval = std::chrono::nanoseconds::zero();
    BufferResource resource(config);
    bench::BenchBytes const bytes(buffer_size);
    std::vector<Buffer> buffers;
    for (std::uint64_t offset = 0, index = 0; offset < total; offset += buffer_size, ++index) {
        buffers.push_back(bytes.make_buffer(resource, std::min(buffer_size, total - offset), index));
    }
    std::cout << "spill_write_vs_raw: " << format_bytes(total) << " in " << buffers.size() << " buffers of "
              << format_bytes(buffer_size) << ", " << rounds << " rounds, in " << resource.spill_directory().string()
              << "\n";

    std::vector<double> ratios;
    std::vector<double> spill_rates;
    std::vector<double> raw_rates;
    double const gib = static_cast<double>(total) / (1U << 30);
    for (int round = 0; round < rounds; ++round) {
        double raw = 0;
        double spill = 0;
        if (round % 2 == 0) {
            raw = bench::raw_write_seconds(resource.spill_directory() / "raw-baseline", buffers);
            spill = spill_seconds(resource, buffers);
        } else {
            spill = spill_seconds(resource, buffers);
            raw = bench::raw_write_seconds(resource.spill_directory() / "raw-baseline", buffers);
        }
        std::cout << "  round " << round << ": raw " << gib / raw << " GiB/s, spill " << gib / spill << " GiB/s\n";
        ratios.push_back(raw / spill);
        spill_rates.push_back(gib / spill);
        raw_rates.push_back(gib / raw);
    }
    bench::metric("spill_write_throughput", bench::median(spill_rates), "GiB/s");
    bench::metric("raw_odirect_write_throughput", bench::median(raw_rates), "GiB/s");
    bench::metric("spill_write_vs_raw", bench::median(ratios), "ratio");
}

}  // namespace

int main(int argc, char** argv) {
    return bench::guarded_main("spill_write_vs_raw", [&] {
        run(bench::size_argument(argc, argv, 1, std::uint64_t{2} << 30),
            bench::size_argument(argc, argv, 2, std::uint64_t{64} << 20), argc > 3 ? std::stoi(argv[3]) : 5);
    });
}
