// Throughput of the table layer against the physical limits it works under:
// CSV parsing, and splitting CSV rows by key hash as a repartition does,
// against reading the same file (`cat`); hashing, partitioning, packing and
// generating against memcpy of the same bytes. Everything runs on one thread
// and is timed in that thread's CPU time, so other processes on a shared
// machine do not distort the ratios. Prints METRIC lines; usage:
// spillway_bench_table [SCALE] (TPC-H scale factor, default 0.25).

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <spillway/io/csv_reader.hpp>
#include <spillway/io/csv_writer.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table/packed_table.hpp>
#include <spillway/table/table_checksum.hpp>
#include <spillway/table/tpch_generator.hpp>

#include "metric.hpp"

using namespace spillway::io;
using namespace spillway::table;
using spillway::bench::metric;

namespace {

constexpr int repetitions = 3;
constexpr std::uint32_t partitions = 64;

/// The CPU time this thread has used, user and system, in seconds.
double thread_seconds() {
    timespec now{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

/// The least CPU time of `repetitions` runs of `work`, in seconds.
double best_seconds(std::function<void()> const& work) {
    double best = 1e300;
    for (int run = 0; run < repetitions; ++run) {
        auto const start = thread_seconds();
        work();
        best = std::min(best, thread_seconds() - start);
    }
    return best;
}

void info(char const* what, double bytes, double seconds) {
    std::printf("  %-34s %8.1f MB in %7.3f s = %8.1f MB/s\n", what, bytes / 1e6, seconds, bytes / 1e6 / seconds);
}

/// Bytes per second of a single-threaded memcpy of `bytes` bytes.
double memcpy_rate(std::size_t bytes) {
    auto source = std::make_unique<char[]>(bytes);
    auto destination = std::make_unique<char[]>(bytes);
    std::memset(source.get(), 1, bytes);
    std::memset(destination.get(), 2, bytes);
    auto const seconds = best_seconds([&] { std::memcpy(destination.get(), source.get(), bytes); });
    info("memcpy", static_cast<double>(bytes), seconds);
    return static_cast<double>(bytes) / seconds;
}

/// Bytes per second of reading `path` to nowhere, as `cat path > /dev/null`.
double cat_rate(std::filesystem::path const& path) {
    constexpr std::size_t buffer_bytes = 1 << 20;
    auto buffer = std::make_unique<char[]>(buffer_bytes);
    auto const seconds = best_seconds([&] {
        int const descriptor = ::open(path.c_str(), O_RDONLY);
        while (::read(descriptor, buffer.get(), buffer_bytes) > 0) {
        }
        ::close(descriptor);
    });
    auto const bytes = static_cast<double>(std::filesystem::file_size(path));
    info("cat to /dev/null", bytes, seconds);
    return bytes / seconds;
}

}  // namespace

int main(int argc, char** argv) {
    double const scale = argc > 1 ? std::atof(argv[1]) : 0.25;
    TpchGenerator const generator(scale, 42);
    std::printf("spillway_bench_table: TPC-H lineitem, scale %.3f, %zu chunks, one thread\n", scale,
                generator.num_chunks());

    std::vector<Table> chunks(generator.num_chunks());
    auto const generate_seconds = best_seconds([&] {
        for (std::size_t chunk = 0; chunk < chunks.size(); ++chunk) {
            chunks[chunk] = generator.lineitem(chunk);
        }
    });
    auto const lineitem = Table::concatenate(chunks);
    chunks.clear();
    auto const table_bytes = static_cast<double>(lineitem.byte_size());
    auto const memcpy_bytes_per_second = memcpy_rate(lineitem.byte_size());
    info("generate lineitem", table_bytes, generate_seconds);

    auto const directory = std::filesystem::temp_directory_path() / ("spillway-bench-table-" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory);
    auto const path = directory / "lineitem.csv";
    CsvOptions const options;
    auto const write_seconds = best_seconds([&] {
        CsvWriter writer(path, options, lineitem.schema());
        for (std::size_t begin = 0; begin < lineitem.num_rows(); begin += 100'000) {
            writer.write(lineitem.slice(begin, std::min<std::size_t>(100'000, lineitem.num_rows() - begin)));
        }
        writer.close();
    });
    auto const csv_bytes = static_cast<double>(std::filesystem::file_size(path));
    info("write CSV", csv_bytes, write_seconds);
    auto const cat_bytes_per_second = cat_rate(path);
    std::string header;
    append_csv_header(lineitem.schema(), options, header);
    auto const header_bytes = header.size();

    // The fastest of several reads of the whole file, calling `on_block` for every block.
    auto const time_blocks = [&](std::function<void(CsvBlock const&)> const& on_block) {
        return best_seconds([&] {
            CsvReader reader(path, options, lineitem.schema());
            while (auto block = reader.read_block()) {
                on_block(*block);
            }
        });
    };
    std::size_t parsed_rows = 0;
    auto const parse_seconds = time_blocks([&](CsvBlock const& block) { parsed_rows += block.parse().num_rows(); });
    info("parse CSV, every column", csv_bytes, parse_seconds);
    std::vector<std::size_t> const key{0};
    std::uint64_t key_sum = 0;
    auto const key_seconds = time_blocks([&](CsvBlock const& block) {
        for (auto const value : block.parse_columns(key).columns.column(0).values<std::int64_t>()) {
            key_sum += static_cast<std::uint64_t>(value);
        }
    });
    info("parse CSV, key column and row ranges", csv_bytes, key_seconds);
    std::size_t split_bytes = 0;
    auto const repartition_seconds = time_blocks([&](CsvBlock const& block) {
        auto const rows = block.parse_columns(key);
        for (auto const& part : rows.split(partition_rows(rows.columns, key, partitions), partitions)) {
            split_bytes += part.size();
        }
    });
    info("split CSV rows into 64 by key hash", csv_bytes, repartition_seconds);
    std::filesystem::remove_all(directory);
    auto const runs = static_cast<std::size_t>(repetitions);
    if (parsed_rows != runs * lineitem.num_rows() || key_sum == 0
        || split_bytes != runs * (static_cast<std::size_t>(csv_bytes) - header_bytes)) {
        std::fprintf(stderr, "spillway_bench_table: parsed %zu rows of %zu per run\n", parsed_rows / runs,
                     lineitem.num_rows());
        return 1;
    }

    std::vector<Table> parts;
    auto const partition_seconds = best_seconds([&] { parts = hash_partition(lineitem, key, partitions); });
    info("hash partition into 64", table_bytes, partition_seconds);
    TableChecksum checksum;
    auto const checksum_seconds = best_seconds([&] { checksum = TableChecksum::of(lineitem); });
    info("checksum every column", table_bytes, checksum_seconds);
    // Packing writes into memory the caller reserved, as the shuffle does.
    std::vector<std::byte> payload(packed_size(lineitem));
    std::vector<std::byte> metadata;
    auto const pack_seconds = best_seconds([&] { metadata = pack_into(lineitem, payload); });
    info("pack into a reserved buffer", table_bytes, pack_seconds);
    Table unpacked;
    auto const unpack_seconds = best_seconds([&] { unpacked = unpack(metadata, payload); });
    info("unpack", table_bytes, unpack_seconds);
    if (!(unpacked == lineitem) || checksum.rows != lineitem.num_rows()) {
        std::fprintf(stderr, "spillway_bench_table: unpacked table differs\n");
        return 1;
    }

    auto const versus_memcpy = [&](double seconds) { return table_bytes / seconds / memcpy_bytes_per_second; };
    auto const versus_cat = [&](double seconds) { return csv_bytes / seconds / cat_bytes_per_second; };
    metric("csv_parse_vs_cat", versus_cat(parse_seconds), "ratio");
    metric("csv_key_scan_vs_cat", versus_cat(key_seconds), "ratio");
    metric("csv_split_by_key_vs_cat", versus_cat(repartition_seconds), "ratio");
    metric("csv_write_vs_cat", versus_cat(write_seconds), "ratio");
    metric("hash_partition_vs_memcpy", versus_memcpy(partition_seconds), "ratio");
    metric("table_checksum_vs_memcpy", versus_memcpy(checksum_seconds), "ratio");
    metric("pack_vs_memcpy", versus_memcpy(pack_seconds), "ratio");
    metric("unpack_vs_memcpy", versus_memcpy(unpack_seconds), "ratio");
    metric("tpch_generate_vs_memcpy", versus_memcpy(generate_seconds), "ratio");
    return 0;
}
