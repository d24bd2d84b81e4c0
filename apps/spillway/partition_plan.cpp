#include "partition_plan.hpp"

#include <algorithm>

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>

namespace spillway::cli {

std::uint64_t PartitionPlan::bound() const noexcept {
    auto const working = std::min<std::uint64_t>(threads, window);
    return fixed_bytes + block_bytes * (1 + window + 2 * working)
         + std::uint64_t{partitions} * write_buffer_bytes;
}

PartitionPlan PartitionPlan::make(std::uint64_t limit, std::uint64_t block_bytes, std::size_t threads,
                                  std::uint32_t partitions, std::optional<std::size_t> window) {
    SPILLWAY_EXPECTS(!window || *window >= 1, "--window must be at least 1", InvalidArgument);
    // The least window worth running: one block per thread, or fewer if asked.
    PartitionPlan plan{limit, block_bytes, threads, partitions, 0, std::min(threads, window.value_or(threads))};
    constexpr std::size_t page = 4096;
    plan.write_buffer_bytes = std::clamp<std::size_t>(limit / 4 / partitions / page * page, smallest_write_buffer,
                                                      largest_write_buffer);
    SPILLWAY_EXPECTS(
        plan.bound() <= limit,
        "memory limit " << format_bytes(limit) << " is too small to partition into " << partitions << " files on "
            << threads << " threads with blocks of " << format_bytes(block_bytes) << ": it needs at least "
            << format_bytes(plan.bound()) << " (" << format_bytes(fixed_bytes) << " for the program, "
            << format_bytes(block_bytes * (1 + 3 * plan.window)) << " for " << plan.window
            << (plan.window == 1 ? " block" : " blocks") << " in flight and the reader, "
            << format_bytes(std::uint64_t{partitions} * plan.write_buffer_bytes)
            << " of write buffers); raise --memory-limit to at least that, or lower --threads, --block-size or "
               "--partitions",
        InvalidArgument);
    auto const fits = [&](std::size_t candidate) {
        plan.window = candidate;
        return plan.bound() <= limit;
    };
    if (window) {
        if (!fits(*window)) {
            std::size_t largest = std::min(threads, *window);
            while (fits(largest + 1)) {
                ++largest;
            }
            SPILLWAY_FAIL("--window " << *window << " does not fit in the memory limit " << format_bytes(limit)
                                      << " with blocks of " << format_bytes(block_bytes) << ": at most " << largest
                                      << " blocks fit; lower --window or raise --memory-limit",
                          InvalidArgument);
        }
        return plan;
    }
    std::size_t chosen = threads;
    while (chosen < 4 * threads && fits(chosen + 1)) {
        ++chosen;
    }
    plan.window = chosen;
    return plan;
}

}  // namespace spillway::cli
