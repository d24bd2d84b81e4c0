#include "partition_plan.hpp"

#include <algorithm>

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>

namespace spillway::cli {

std::uint64_t PartitionPlan::bound() const noexcept {
    auto const working = std::min<std::uint64_t>(threads, window);
    return fixed_bytes + block_bytes * (2 + window + 2 * working)
         + std::uint64_t{partitions} * (write_buffer_bytes + file_overhead_bytes);
}

void PartitionPlan::describe(nlohmann::ordered_json& settings) const {
    settings["window"] = window;
    settings["block_size_bytes"] = block_bytes;
    settings["memory_limit_bytes"] = limit;
    settings["memory_bound_bytes"] = bound();
}

PartitionPlan PartitionPlan::with_window(std::uint64_t limit, std::uint64_t block_bytes, std::size_t threads,
                                         std::uint32_t partitions, std::size_t window,
                                         FileWriters const& writers) noexcept {
    constexpr std::uint64_t page = 4096;
    auto const quarter = std::clamp<std::uint64_t>(limit / 4 / partitions / page * page, smallest_write_buffer,
                                                   std::max(writers.largest_buffer, smallest_write_buffer));
    PartitionPlan plan{limit,  block_bytes, threads, partitions, static_cast<std::size_t>(quarter), window,
                       writers.overhead};
    // Where the rest leaves the files less than a quarter, their buffers
    // make do with what is left, down to the least.
    if (auto const bound = plan.bound(); bound > limit) {
        auto const cut = (bound - limit + partitions - 1) / partitions;
        plan.write_buffer_bytes = static_cast<std::size_t>(
            cut >= quarter - smallest_write_buffer ? smallest_write_buffer : (quarter - cut) / page * page);
    }
    return plan;
}

PartitionPlan PartitionPlan::make(std::uint64_t limit, std::uint64_t block_bytes, std::size_t threads,
                                  std::uint32_t partitions, std::optional<std::size_t> window) {
    return make(limit, block_bytes, threads, partitions, window, FileWriters{});
}

PartitionPlan PartitionPlan::make(std::uint64_t limit, std::uint64_t block_bytes, std::size_t threads,
                                  std::uint32_t partitions, std::optional<std::size_t> window,
                                  FileWriters const& writers) {
    SPILLWAY_EXPECTS(!window || *window >= 1, "--window must be at least 1", InvalidArgument);
    // The least window worth running: one block per thread, or fewer if asked.
    auto const least_window = std::min(threads, window.value_or(threads));
    auto const fits = [&](std::uint64_t candidate_limit, std::size_t candidate_window) {
        auto const plan = with_window(candidate_limit, block_bytes, threads, partitions, candidate_window, writers);
        return plan.bound() <= candidate_limit;
    };
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
        auto const least = with_window(high * mebibyte, block_bytes, threads, partitions, least_window, writers);
        SPILLWAY_FAIL("memory limit " << format_bytes(limit) << " is too small to partition into " << partitions
                          << " files on " << threads << (threads == 1 ? " thread" : " threads") << " with blocks of "
                          << format_bytes(block_bytes) << ": it needs at least " << format_bytes(least.limit) << " ("
                          << format_bytes(fixed_bytes) << " for the program, "
                          << format_bytes(least.bound() - fixed_bytes
                                          - std::uint64_t{partitions}
                                                * (least.write_buffer_bytes + writers.overhead))
                          << " for " << least_window << (least_window == 1 ? " block" : " blocks")
                          << " in flight, the reader and the writer, " << partitions << " write buffers of "
                          << format_bytes(least.write_buffer_bytes + writers.overhead)
                          << "); raise --memory-limit to at least that, or lower --threads, --block-size or "
                             "--partitions",
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
                                      << " blocks fit; lower --window or raise --memory-limit",
                          InvalidArgument);
        }
        return with_window(limit, block_bytes, threads, partitions, *window, writers);
    }
    // A wider window only where it leaves the write buffers as they are.
    auto chosen = with_window(limit, block_bytes, threads, partitions, least_window, writers);
    while (chosen.window < 4 * threads) {
        auto const wider = with_window(limit, block_bytes, threads, partitions, chosen.window + 1, writers);
        if (wider.bound() > limit || wider.write_buffer_bytes < chosen.write_buffer_bytes) {
            break;
        }
        chosen = wider;
    }
    return chosen;
}

}  // namespace spillway::cli
