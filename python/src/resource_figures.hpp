#pragma once
/// @file
/// What a shuffle's buffer resources report, summed over its ranks.

#include <cstdint>
#include <memory>
#include <span>

#include <spillway/memory/buffer_resource.hpp>

namespace spillway::python {

/// The figures of the buffer resources of a shuffle's ranks in this process.
struct ResourceFigures {
    std::uint64_t spilled_bytes = 0;    ///< bytes moved from HOST to DISK
    std::uint64_t read_back_bytes = 0;  ///< bytes moved from DISK back to HOST
    std::uint64_t peak_host_bytes = 0;  ///< the sum of each rank's HOST peak
    std::uint64_t peak_disk_bytes = 0;  ///< the sum of each rank's DISK peak
    std::uint64_t host_limit_bytes = 0;  ///< the sum of each rank's HOST limit

    /// The figures of `resources`, now.
    static ResourceFigures of(std::span<std::unique_ptr<memory::BufferResource> const> resources);
};

}  // namespace spillway::python
