#include "partition_plan.hpp"

#include <algorithm>

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>

#include "job_limits.hpp"

namespace spillway::cli {

std::uint64_t PartitionPlan::bound() const noexcept {
    auto const working = std::min<std::uint64_t>(threads, window);
    return fixed_bytes + reader_bytes + block_bytes * (2 + window + 2 * working)
         + std::uint64_t{partitions} * (write_buffer_bytes + file_overhead_bytes) + (working + 1) * flush_bytes;
}

void PartitionPlan::describe(nlohmann::ordered_json& settings) const {
    settings["window"] = window;
    settings["block_size_bytes"] = block_bytes;
    settings["memory_limit_bytes"] = limit;
    settings["memory_bound_bytes"] = bound();
}

PartitionPlan PartitionPlan::with_window(std::uint64_t limit, std::uint64_t block_bytes, std::size_t threads,
                                         std::uint32_t partitions, std::size_t window,
                                         Files const& files) noexcept {
    constexpr std::uint64_t page = 4096;
    auto const quarter = std::clamp<std::uint64_t>(limit / 4 / partitions / page * page, smallest_write_buffer,
                                                   std::max(files.largest_buffer, smallest_write_buffer));
    auto const with_buffer = [&](std::uint64_t buffer) {
        return PartitionPlan{limit,
                             block_bytes,
                             threads,
                             partitions,
                             static_cast<std::size_t>(buffer),
                             window,
                             files.overhead,
                             files.flush ? files.flush(buffer) : 0,
                             files.reader};
    };
    // Where the rest leaves the files less than a quarter, their buffers
    // make do with what is left (the most pages that fit), down to the least.
    if (with_buffer(quarter).bound() <= limit) {
        return with_buffer(quarter);
    }
    std::uint64_t fits = smallest_write_buffer / page;
    std::uint64_t too_large = quarter / page;
    while (fits + 1 < too_large) {
        auto const middle = fits + (too_large - fits) / 2;
        (with_buffer(middle * page).bound() <= limit ? fits : too_large) = middle;
    }
    return with_buffer(fits * page);
}

PartitionPlan PartitionPlan::make(std::uint64_t limit, std::uint64_t block_bytes, std::size_t threads,
                                  std::uint32_t partitions, std::optional<std::size_t> window) {
    return make(limit, block_bytes, threads, partitions, window, Files{});
}

PartitionPlan PartitionPlan::make(std::uint64_t limit, std::uint64_t block_bytes, std::size_t threads,
                                  std::uint32_t partitions, std::optional<std::size_t> window,
                                  Files const& files) {
    SPILLWAY_EXPECTS(!window || *window >= 1, "--window must be at least 1", InvalidArgument);
    auto const fits = [&](std::uint64_t candidate_limit, std::size_t candidate_window) {
        auto const plan = with_window(candidate_limit, block_bytes, threads, partitions, candidate_window, files);
        return plan.bound() <= candidate_limit;
    };
    // The least window worth running: one block per thread, or fewer if
    // asked, or, without --window, as many as fit, down to one (on many
    // threads at a small limit, some threads then have no block to work on).
    auto least_window = std::min(threads, window.value_or(threads));
    while (!window && least_window > 1 && !fits(limit, least_window)) {
        --least_window;
    }
    if (!fits(limit, least_window)) {
        // The least write buffers grow with the limit, so search for the
        // least limit that fits, to the MiB.
        constexpr std::uint64_t mebibyte = std::uint64_t{1} << 20;
        std::uint64_t low = limit / mebibyte;
        std::uint64_t high = std::max<std::uint64_t>(2 * low, 1);
        while (!fits(high * mebibyte, least_window)) {
            high *= 2;
        }
        while (low + 1 < high) {
            auto const middle = low + (high - low) / 2;
            (fits(middle * mebibyte, least_window) ? high : low) = middle;
        }
        auto const least = with_window(high * mebibyte, block_bytes, threads, partitions, least_window, files);
        SPILLWAY_FAIL("memory limit " << format_bytes(limit) << " is too small to partition into " << partitions
                          << " files on " << threads << (threads == 1 ? " thread" : " threads") << " with blocks of "
                          << format_bytes(block_bytes) << ": it needs at least " << format_least_limit(least.limit) << " ("
                          << format_bytes(fixed_bytes) << " for the program, "
                          << format_bytes(least.bound() - fixed_bytes
                                          - std::uint64_t{partitions}
                                                * (least.write_buffer_bytes + files.overhead))
                          << " for " << least_window << (least_window == 1 ? " block" : " blocks")
                          << " in flight, the reader and the writer, " << partitions << " write buffers of "
                          << format_bytes(least.write_buffer_bytes + files.overhead)
                          << "); raise memory_limit_host to at least that, or lower "
                          << (least_window > 1 ? "--window, " : "")
                          << (files.sized_by_flag ? "--block-size or --partitions" : "--partitions"),
                      InvalidArgument);
    }
    if (window) {
        if (!fits(limit, *window)) {
            auto largest = least_window;
            while (fits(limit, largest + 1)) {
                ++largest;
            }
            SPILLWAY_FAIL("--window " << *window << " does not fit in the memory limit " << format_bytes(limit)
                                      << " with blocks of " << format_bytes(block_bytes) << ": at most " << largest
                                      << " blocks fit; lower --window or raise memory_limit_host",
                          InvalidArgument);
        }
        return with_window(limit, block_bytes, threads, partitions, *window, files);
    }
    // A wider window only where it leaves the write buffers as they are.
    auto chosen = with_window(limit, block_bytes, threads, partitions, least_window, files);
    while (chosen.window < 4 * threads) {
        auto const wider = with_window(limit, block_bytes, threads, partitions, chosen.window + 1, files);
        if (wider.bound() > limit || wider.write_buffer_bytes < chosen.write_buffer_bytes) {
            break;
        }
        chosen = wider;
    }
    return chosen;
}

}  // namespace spillway::cli
