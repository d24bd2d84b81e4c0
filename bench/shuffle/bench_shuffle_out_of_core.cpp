// A shuffle of 4 times more data than HOST may hold, against the time the
// disk needs for the bytes it spilled and read back, measured in the same run.
//
// Usage: spillway_bench_shuffle_out_of_core [PER_RANK [CHUNK [RANKS [ROUNDS]]]]
//
// RANKS (4) in-process ranks, each with a HOST limit of PER_RANK / 4 (PER_RANK
// is 256 MiB by default), each make PER_RANK bytes of incompressible chunks of
// CHUNK bytes (4 MiB), one at a time (`reserve_and_spill`), insert them round
// 4 * RANKS partitions, and extract their partitions chunk by chunk. The time
// runs from the first chunk made to the last extracted. The bound is
//
//   spilled bytes / raw write rate + read-back bytes / raw read rate,
//
// the bytes as the resources counted them (`memory.copy.host_to_disk.bytes`,
// `memory.copy.disk_to_host.bytes`) and the rates of O_DIRECT writes and reads
// of CHUNK-sized blocks into the spill directory, by one thread and by RANKS
// threads at once, whichever is faster, measured just before. The raw I/O
// writes from and reads into blocks that fill as much memory as the ranks'
// HOST limits together, since that is where the shuffle's spilled chunks come
// from and its read-backs go. (A chunk spilled just after it was made can
// still be in the CPU's caches, which can put a round a little under it.)
// Each round prints its time split where the last rank finished inserting,
// and the bound split into its writes and its reads, to compare phase by
// phase.
//
// The ranks, their resources and their communicators are made once and serve
// every round, as a long-lived worker's would. So the first round also pays
// for what a process pays once: touching its HOST memory for the first time
// (on the benchmark machine, whose host takes freed memory back, 256 MiB of it
// took 0.4 s), and making its spill files. That round's figure is
//
//   METRIC shuffle_out_of_core_first_round_vs_io_bound <time / bound> ratio
//
// and the headline is the median of the ROUNDS (3) rounds after it, which
// reuse the pooled HOST blocks and freed spill files of the rounds before,
// as the raw I/O reuses its blocks and file:
//
//   METRIC shuffle_out_of_core_vs_io_bound <time / bound> ratio
//
// 1.0 means the shuffle takes no longer than its disk traffic; lower is better.
// The same with the rates of raw I/O laid out in a new file per chunk, as the
// disk tier lays out a spill file the first time it writes it, separates the
// shuffle's own overhead from the cost of making files:
//
//   METRIC shuffle_out_of_core_vs_file_per_chunk_bound <time / that bound> ratio
//
// Raw I/O through one block per thread, written and read over and over, is
// faster wherever a transfer is a copy that gains from the CPU's caches (on
// the benchmark machine's virtual disk, one thread read 8.2 to 8.4 GiB/s into
// one 4 MiB block and 4.4 to 5.6 into 64 MiB of blocks in turn, in three runs
// each; docs/perf-notes/2026-12-01-benchmark-history.md has the figures for
// other sizes). No data that fills the HOST limits stays in the caches, but
// the figure against that bound is kept,
// to compare with the figures measured before the bound used as much memory
// as the shuffle:
//
//   METRIC shuffle_out_of_core_vs_one_block_io_bound <time / that bound> ratio
//
// The bound above counts the bytes the shuffle chose to spill, so a shuffle
// that spills more than it must is not charged for it. Every chunk is held
// until all ranks have inserted, so any shuffle of this data must write what
// does not fit in the ranks' HOST limits, RANKS * (PER_RANK - PER_RANK / 4)
// bytes, and read it back. Against that least traffic, at the raw rates:
//
//   METRIC shuffle_out_of_core_vs_least_io_bound <time / that bound> ratio
//
// The ranks' other memory settings come from `SPILLWAY_*` variables, as in
// any program that reads its options from the environment; for example
// `SPILLWAY_SPILL_HEADROOM=32MiB SPILLWAY_SPILL_INTERVAL=5ms` has each rank's
// periodic spill thread start spilling before HOST is full.
//
// Raw files are removed outside the timings, and every timing starts after a
// sync(2), so that no measurement pays for the writes and trims of the one
// before.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <spillway/core/options.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/memory_config.hpp>
#include <spillway/shuffle/shuffler.hpp>

#include "shuffle_bench_support.hpp"

using namespace spillway;

namespace {

/// Bytes per second of raw O_DIRECT writes and reads.
struct DiskRates {
    double write = 0;
    double read = 0;
};

/// How raw I/O lays its blocks out on disk.
enum class Layout {
    /// One file per thread, block after block: the disk at its best.
    one_file,
    /// One file per block, as the disk tier makes a spill file: created,
    /// written and closed; later opened, read and closed.
    file_per_block,
};

/// How much memory raw I/O moves its blocks through.
enum class Footprint {
    /// As much as the ranks' HOST limits together: the memory the chunks the
    /// shuffle spills come from, and its read-backs go to.
    ranks_memory,
    /// One block per thread, written and read over and over: what `dd` with a
    /// block size measures. It stays in the CPU's caches, which no data that
    /// fills the HOST limits can.
    one_block,
};

/// A descriptor of `path` opened with O_DIRECT and `flags`.
int open_direct(std::filesystem::path const& path, int flags) {
    int const fd = ::open(path.c_str(), flags | O_DIRECT, 0600);
    SPILLWAY_EXPECTS(fd >= 0, "cannot open " << path.string() << " with O_DIRECT", IoError);
    return fd;
}

/// Checks that a transfer of `size` bytes on `path` moved them all.
void check_transfer(ssize_t done, std::size_t size, std::filesystem::path const& path) {
    SPILLWAY_EXPECTS(done == static_cast<ssize_t>(size), "raw I/O on " << path.string() << " failed", IoError);
}

/// Writes `count` blocks in `layout` under the name `base`, the `index`-th a
/// copy of `blocks[index % blocks.size()]`, then reads them back into the
/// same blocks; returns the seconds of each. Removes the files untimed.
std::pair<double, double> write_and_read(
    std::filesystem::path const& base, std::span<memory::Buffer> blocks, std::uint64_t count, Layout layout
) {
    auto const block_size = blocks.front().size();
    auto const path_of = [&](std::uint64_t index) {
        return layout == Layout::one_file ? base : std::filesystem::path(base.string() + "-" + std::to_string(index));
    };
    auto const pass = [&](bool write) {
        bench::Stopwatch const clock;
        int fd = -1;
        for (std::uint64_t index = 0; index < count; ++index) {
            auto const path = path_of(index);
            auto const data = blocks[index % blocks.size()].data();
            if (layout == Layout::file_per_block || index == 0) {
                fd = open_direct(path, write ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY);
            }
            auto const offset = layout == Layout::one_file ? static_cast<off_t>(index * block_size) : off_t{0};
            auto const done =
                write ? ::pwrite(fd, data.data(), data.size(), offset) : ::pread(fd, data.data(), data.size(), offset);
            check_transfer(done, data.size(), path);
            if (layout == Layout::file_per_block || index + 1 == count) {
                ::close(fd);
            }
        }
        return clock.seconds();
    };
    auto const write = pass(true);
    auto const read = pass(false);
    for (std::uint64_t index = 0; index < count; ++index) {
        std::filesystem::remove(path_of(index));
    }
    return {write, read};
}

/// The raw rates of `threads` threads each moving `bytes` through files of
/// its own in `directory`, laid out as `layout`, and through `blocks`
/// (`per_thread` of them each, in turn).
DiskRates disk_rates(
    std::filesystem::path const& directory, std::span<memory::Buffer> blocks, std::size_t per_thread, int threads,
    std::uint64_t bytes, Layout layout
) {
    auto const block_size = blocks.front().size();
    std::vector<std::pair<double, double>> seconds(static_cast<std::size_t>(threads));
    ::sync();
    bench::run_ranks(threads, [&](comm::Rank thread) {
        seconds[thread] = write_and_read(
            directory / ("raw-" + std::to_string(thread)),
            blocks.subspan(static_cast<std::size_t>(thread) * per_thread, per_thread),
            bytes / block_size, layout
        );
    });
    double write = 0;
    double read = 0;
    for (auto const& [w, r] : seconds) {
        write = std::max(write, w);
        read = std::max(read, r);
    }
    auto const moved = static_cast<double>(bytes / block_size * block_size) * threads;
    return {moved / write, moved / read};
}

/// The faster of one thread moving `bytes` and `threads` threads moving
/// their share each, for reads and writes separately, under `directory`,
/// through `blocks` as `footprint` says.
DiskRates best_rates(
    std::filesystem::path const& directory, std::span<memory::Buffer> blocks, Footprint footprint,
    std::uint64_t bytes, int threads, Layout layout
) {
    auto const per_thread = [&](int of) {
        return footprint == Footprint::one_block ? std::size_t{1} : blocks.size() / static_cast<std::size_t>(of);
    };
    auto const single = disk_rates(directory, blocks, per_thread(1), 1, bytes, layout);
    auto const parallel = disk_rates(
        directory, blocks, per_thread(threads), threads, bytes / static_cast<std::uint64_t>(threads), layout
    );
    return {std::max(single.write, parallel.write), std::max(single.read, parallel.read)};
}

double total_of(std::vector<std::unique_ptr<memory::BufferResource>> const& resources, std::string_view name) {
    double total = 0;
    for (auto const& resource : resources) {
        if (auto const entry = resource->statistics().get(name)) {
            total += entry->total;
        }
    }
    return total;
}

/// What one shuffle took.
struct Run {
    double seconds = 0;
    double inserting = 0;         ///< of them, until the last rank finished inserting
    double spilled = 0;           ///< bytes the resources moved HOST to DISK
    double outgoing_spilled = 0;  ///< of them, chunks waiting to be sent
    double read_back = 0;         ///< bytes they moved DISK to HOST
    double peak = 0;              ///< the largest HOST use of any rank so far, in bytes
    double files_created = 0;     ///< spill files made
    double files_reused = 0;      ///< spill files written over
    double blocks_reused = 0;     ///< HOST buffers made in a pooled block
};

/// Shuffles `per_rank` bytes per rank on the ranks of `group`, as the file
/// comment says; clears their statistics first.
Run shuffle_once(
    bench::LocalGroup& group, std::uint64_t per_rank, std::uint64_t chunk, bench::BenchBytes const& bytes
) {
    auto const ranks = static_cast<comm::Rank>(group.resources.size());
    auto const chunks_per_rank = per_rank / chunk;
    auto const partitions = static_cast<shuffle::PartitionId>(4 * ranks);
    for (auto const& resource : group.resources) {
        resource->statistics().clear();
    }
    Run run;
    std::vector<std::uint64_t> extracted(static_cast<std::size_t>(ranks), 0);
    using Clock = std::chrono::steady_clock;
    std::vector<Clock::time_point> started(static_cast<std::size_t>(ranks));
    std::vector<Clock::time_point> inserted(static_cast<std::size_t>(ranks));
    ::sync();
    run.seconds = bench::run_ranks(ranks, [&](comm::Rank rank) {
        started[rank] = Clock::now();
        auto& resource = *group.resources[rank];
        shuffle::Shuffler shuffler(*group.communicators[rank], 0, partitions, resource);
        for (std::uint64_t index = 0; index < chunks_per_rank; ++index) {
            auto reservation =
                resource.reserve_and_spill(memory::MemoryType::HOST, chunk, memory::AllowOverbooking::yes);
            auto buffer = resource.make_buffer(chunk, reservation);
            bytes.fill(buffer, bench::salt_of(rank, index));
            std::unordered_map<shuffle::PartitionId, shuffle::PackedData> one;
            one.emplace(bench::partition_of(rank, index, partitions), shuffle::PackedData{{}, std::move(buffer)});
            shuffler.insert(std::move(one));
        }
        shuffler.insert_finished();
        inserted[rank] = Clock::now();
        extracted[rank] = bench::extract_all(shuffler);
    });
    run.inserting = std::chrono::duration<double>(std::ranges::max(inserted) - std::ranges::min(started)).count();
    std::uint64_t moved = 0;
    for (auto const bytes_of_rank : extracted) {
        moved += bytes_of_rank;
    }
    SPILLWAY_EXPECTS(
        moved == static_cast<std::uint64_t>(ranks) * chunks_per_rank * chunk, "the shuffle lost bytes", CorruptData
    );
    run.spilled = total_of(group.resources, "memory.copy.host_to_disk.bytes");
    run.outgoing_spilled = total_of(group.resources, "shuffle.outgoing.spill.bytes");
    run.read_back = total_of(group.resources, "memory.copy.disk_to_host.bytes");
    run.files_created = total_of(group.resources, "memory.disk.files_created");
    run.files_reused = total_of(group.resources, "memory.disk.files_reused");
    run.blocks_reused = total_of(group.resources, "memory.host.blocks_reused");
    for (auto const& resource : group.resources) {
        run.peak = std::max(run.peak, static_cast<double>(resource->peak_memory_used(memory::MemoryType::HOST)));
    }
    return run;
}

}  // namespace

int main(int argc, char** argv) {
    return bench::guarded_main("spillway_bench_shuffle_out_of_core", [&] {
        auto const per_rank = bench::size_argument(argc, argv, 1, std::uint64_t{256} << 20);
        auto const chunk = bench::size_argument(argc, argv, 2, std::uint64_t{4} << 20);
        comm::Rank const ranks = argc > 3 ? std::stoi(argv[3]) : 4;
        int const rounds = argc > 4 ? std::stoi(argv[4]) : 3;
        SPILLWAY_EXPECTS(rounds > 0, "ROUNDS must be at least 1", InvalidArgument);
        bench::BenchBytes const bytes(chunk);
        double const mib = 1 << 20;
        auto config = memory::MemoryConfig::from_options(Options::from_environment());
        auto const host_limit = per_rank / 4;
        config.host_limit = SizeSpec::bytes(host_limit);
        std::cout << ranks << " ranks x " << per_rank / mib << " MiB in chunks of " << chunk / mib
                  << " MiB, HOST limit " << host_limit / mib << " MiB each; periodic spill thread: every "
                  << std::chrono::duration<double, std::milli>(config.spill_interval).count() << " ms, keeping "
                  << config.spill_headroom / mib << " MiB of HOST available\n";

        bench::LocalGroup group(ranks, config);
        // The raw I/O's blocks fill as much memory as the ranks' HOST limits,
        // and are at least one per thread.
        memory::MemoryConfig raw_config;
        raw_config.spill_directory = config.spill_directory;
        memory::BufferResource raw(raw_config);
        std::vector<memory::Buffer> blocks;
        auto const block_count = std::max<std::uint64_t>(ranks, ranks * host_limit / chunk);
        for (std::uint64_t block = 0; block < block_count; ++block) {
            blocks.push_back(bytes.make_buffer(raw, chunk, block));
        }
        auto const raw_rates = [&](Footprint footprint, Layout layout) {
            return best_rates(raw.spill_directory(), blocks, footprint, per_rank, ranks, layout);
        };

        double first_ratio = 0;
        std::vector<double> ratios;
        std::vector<double> layout_ratios;
        std::vector<double> least_ratios;
        std::vector<double> one_block_ratios;
        auto const least_bytes = static_cast<double>(ranks) * static_cast<double>(per_rank - host_limit);
        for (int round = 0; round <= rounds; ++round) {
            auto const rates = raw_rates(Footprint::ranks_memory, Layout::one_file);
            auto const file_rates = raw_rates(Footprint::ranks_memory, Layout::file_per_block);
            auto const one_block_rates = raw_rates(Footprint::one_block, Layout::one_file);
            auto const run = shuffle_once(group, per_rank, chunk, bytes);
            auto const bound = run.spilled / rates.write + run.read_back / rates.read;
            auto const layout_bound = run.spilled / file_rates.write + run.read_back / file_rates.read;
            auto const least_bound = least_bytes / rates.write + least_bytes / rates.read;
            auto const one_block_bound = run.spilled / one_block_rates.write + run.read_back / one_block_rates.read;
            if (round == 0) {
                first_ratio = run.seconds / bound;
            } else {
                ratios.push_back(run.seconds / bound);
                layout_ratios.push_back(run.seconds / layout_bound);
                least_ratios.push_back(run.seconds / least_bound);
                one_block_ratios.push_back(run.seconds / one_block_bound);
            }
            std::cout << (round == 0 ? "first round" : "round " + std::to_string(round)) << ": " << run.seconds
                      << " s (inserting " << run.inserting << " s, extracting " << run.seconds - run.inserting
                      << " s), peak HOST " << run.peak / mib << " MiB\n  spilled " << run.spilled / mib << " MiB ("
                      << run.outgoing_spilled / mib << " MiB of chunks to send), read back " << run.read_back / mib
                      << " MiB; " << run.files_created << " spill files made, " << run.files_reused
                      << " written over; " << run.blocks_reused << " HOST blocks reused\n  raw write/read MiB/s: "
                      << rates.write / mib << "/" << rates.read / mib << " (file per chunk " << file_rates.write / mib
                      << "/" << file_rates.read / mib << ", one block " << one_block_rates.write / mib << "/"
                      << one_block_rates.read / mib << ")\n  bound " << bound << " s (writes "
                      << run.spilled / rates.write << " s, reads " << run.read_back / rates.read
                      << " s); file per chunk " << layout_bound << " s, least I/O " << least_bound
                      << " s, one block " << one_block_bound << " s\n";
        }
        bench::metric("shuffle_out_of_core_first_round_vs_io_bound", first_ratio, "ratio");
        bench::metric("shuffle_out_of_core_vs_file_per_chunk_bound", bench::median(layout_ratios), "ratio");
        bench::metric("shuffle_out_of_core_vs_least_io_bound", bench::median(least_ratios), "ratio");
        bench::metric("shuffle_out_of_core_vs_one_block_io_bound", bench::median(one_block_ratios), "ratio");
        bench::metric("shuffle_out_of_core_vs_io_bound", bench::median(ratios), "ratio");
    });
}
