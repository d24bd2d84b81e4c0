#include "resource_figures.hpp"

#include <string_view>

#include <spillway/core/statistics.hpp>

namespace spillway::python {
namespace {

std::uint64_t total(memory::BufferResource const& resource, std::string_view name) {
    return static_cast<std::uint64_t>(resource.statistics().get(name).value_or(Statistics::Entry{}).total);
}

}  // namespace

ResourceFigures ResourceFigures::of(std::span<std::unique_ptr<memory::BufferResource> const> resources) {
    ResourceFigures figures;
    for (auto const& resource : resources) {
        figures.spilled_bytes += total(*resource, "memory.copy.host_to_disk.bytes");
        figures.read_back_bytes += total(*resource, "memory.copy.disk_to_host.bytes");
        figures.peak_host_bytes += resource->peak_memory_used(memory::MemoryType::HOST);
        figures.peak_disk_bytes += resource->peak_memory_used(memory::MemoryType::DISK);
        figures.host_limit_bytes += resource->memory_limit(memory::MemoryType::HOST);
    }
    return figures;
}

}  // namespace spillway::python
