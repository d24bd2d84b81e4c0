#pragma once
/// @file
/// How much memory this process may use: the machine's physical memory and
/// the limit of the control group (cgroup) it runs in.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

namespace spillway::memory {

/// The machine's physical memory in bytes.
std::uint64_t physical_memory();

/// The memory limit of the cgroup described by `self_cgroup` (the text of
/// `/proc/self/cgroup`) under the cgroup file systems mounted at
/// `cgroup_root`: the smallest `memory.max` (cgroup v2) or
/// `memory.limit_in_bytes` (cgroup v1) on the path from the process's group
/// up to the root. Returns nothing when no limit is set or none can be read.
std::optional<std::uint64_t> cgroup_memory_limit(
    std::filesystem::path const& cgroup_root, std::string_view self_cgroup
);

/// The memory this process may use: the smaller of `physical_memory()` and
/// the limit of its own cgroup. Percentages of the HOST limit
/// (`memory_limit_host=80%`) are taken of this.
std::uint64_t host_memory_capacity();

}  // namespace spillway::memory
