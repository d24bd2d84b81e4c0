// A shuffle between 4 in-process ranks, in memory, against single-threaded
// memcpy of the same bytes in the same run.
//
// Usage: spillway_bench_shuffle_local [TOTAL [CHUNK [ITERATIONS]]]
//
// Each of 4 ranks (threads of this process, LocalCommunicator, a
// BufferResource each, nothing spilled) inserts TOTAL / 4 bytes (2 GiB in all
// by default) in chunks of CHUNK bytes (4 MiB) round 16 partitions, and
// extracts its 4 partitions. The shuffle's time runs from the first insert to
// the last extraction, shufflers' construction included; chunks are filled
// before it starts. The baseline copies the same chunks, one thread, into
// destination buffers touched beforehand. Medians over ITERATIONS (3):
//
//   METRIC shuffle_local_vs_memcpy <memcpy time / shuffle time> ratio
//
// 1.0 means the shuffle moves the bytes as fast as one memcpy of them; the
// local backend hands buffers over without copying, so it can exceed 1.
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <spillway/memory/buffer_resource.hpp>
#include <spillway/shuffle/shuffler.hpp>

#include "shuffle_bench_support.hpp"

using namespace spillway;

namespace {

constexpr comm::Rank ranks = 4;
constexpr shuffle::PartitionId partitions = 4 * ranks;

/// Every rank's chunks, filled.
std::vector<std::vector<memory::Buffer>> make_chunks(
    std::vector<std::unique_ptr<memory::BufferResource>> const& resources, std::uint64_t per_rank,
    std::uint64_t chunk, bench::BenchBytes const& bytes
) {
    std::vector<std::vector<memory::Buffer>> chunks(ranks);
    for (comm::Rank rank = 0; rank < ranks; ++rank) {
        for (std::uint64_t index = 0; index * chunk < per_rank; ++index) {
            chunks[rank].push_back(bytes.make_buffer(*resources[rank], chunk, bench::salt_of(rank, index)));
        }
    }
    return chunks;
}

/// Seconds to memcpy every chunk into destinations touched beforehand.
double memcpy_seconds(std::vector<std::vector<memory::Buffer>> const& chunks, memory::BufferResource& resource) {
    std::vector<memory::Buffer> destinations;
    for (auto const& rank : chunks) {
        for (auto const& chunk : rank) {
            auto reservation = resource.reserve(memory::MemoryType::HOST, chunk.size(), memory::AllowOverbooking::yes);
            destinations.push_back(resource.make_buffer(chunk.size(), reservation));
            std::memset(destinations.back().data().data(), 0, chunk.size());
        }
    }
    bench::Stopwatch const clock;
    auto destination = destinations.begin();
    for (auto const& rank : chunks) {
        for (auto const& chunk : rank) {
            std::memcpy((destination++)->data().data(), chunk.data().data(), chunk.size());
        }
    }
    return clock.seconds();
}

}  // namespace

int main(int argc, char** argv) {
    return bench::guarded_main("spillway_bench_shuffle_local", [&] {
        auto const total = bench::size_argument(argc, argv, 1, std::uint64_t{2} << 30);
        auto const chunk = bench::size_argument(argc, argv, 2, std::uint64_t{4} << 20);
        int const iterations = argc > 3 ? std::stoi(argv[3]) : 3;
        auto const per_rank = total / ranks;

        bench::LocalGroup group(ranks);
        bench::BenchBytes const bytes(chunk);

        std::vector<double> shuffle_seconds;
        std::vector<double> baseline_seconds;
        for (int iteration = 0; iteration < iterations; ++iteration) {
            auto chunks = make_chunks(group.resources, per_rank, chunk, bytes);
            baseline_seconds.push_back(memcpy_seconds(chunks, *group.resources[0]));
            std::vector<std::uint64_t> extracted(ranks, 0);
            shuffle_seconds.push_back(bench::run_ranks(ranks, [&](comm::Rank rank) {
                shuffle::Shuffler shuffler(*group.communicators[rank], 0, partitions, *group.resources[rank]);
                bench::insert_all(shuffler, rank, chunks[rank]);
                extracted[rank] = bench::extract_all(shuffler);
            }));
            std::uint64_t moved = 0;
            for (auto const bytes_of_rank : extracted) {
                moved += bytes_of_rank;
            }
            SPILLWAY_EXPECTS(moved == ranks * ((per_rank + chunk - 1) / chunk) * chunk, "the shuffle lost bytes", CorruptData);
        }
        auto const shuffle = bench::median(shuffle_seconds);
        auto const baseline = bench::median(baseline_seconds);
        double const gib = static_cast<double>(total) / (1 << 30);
        std::cout << ranks << " ranks, " << gib << " GiB in " << (chunk >> 10) << " KiB chunks, " << iterations
                  << " iterations (median): shuffle " << shuffle * 1e3 << " ms (" << gib / shuffle
                  << " GiB/s), memcpy " << baseline * 1e3 << " ms (" << gib / baseline << " GiB/s)\n";
        bench::metric("shuffle_local_vs_memcpy", baseline / shuffle, "ratio");
    });
}
