#include <spillway/memory/system_memory.hpp>

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace spillway::memory {
namespace {

/// cgroup v1 reports "no limit" as the largest page-aligned 63-bit number;
/// anything this large is treated as unlimited.
constexpr std::uint64_t cgroup_v1_unlimited = std::uint64_t{1} << 62;

/// The limit in the control file `path`: a byte count, or nothing for `max`,
/// an absent file, or anything else that is not a number.
std::optional<std::uint64_t> read_limit(std::filesystem::path const& path) {
    std::ifstream file(path);
    std::string text;
    if (!(file >> text)) {
        return std::nullopt;
    }
    std::uint64_t value = 0;
    auto const [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size() || value >= cgroup_v1_unlimited) {
        return std::nullopt;
    }
    return value;
}

/// The smallest limit in `file_name` on the path from `base / group` up to `base`.
std::optional<std::uint64_t> smallest_limit_up_to_root(
    std::filesystem::path const& base, std::string_view group, char const* file_name
) {
    std::optional<std::uint64_t> smallest;
    std::filesystem::path relative = std::filesystem::path(group).relative_path();
    while (true) {
        if (auto const limit = read_limit(base / relative / file_name)) {
            smallest = std::min(smallest.value_or(*limit), *limit);
        }
        if (relative.empty()) {
            return smallest;
        }
        relative = relative.parent_path();
    }
}

bool lists_memory_controller(std::string_view controllers) {
    while (!controllers.empty()) {
        auto const comma = controllers.find(',');
        if (controllers.substr(0, comma) == "memory") {
            return true;
        }
        controllers = comma == std::string_view::npos ? "" : controllers.substr(comma + 1);
    }
    return false;
}

}  // namespace

std::uint64_t physical_memory() {
    auto const pages = sysconf(_SC_PHYS_PAGES);
    auto const page_size = sysconf(_SC_PAGE_SIZE);
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
}

std::optional<std::uint64_t> cgroup_memory_limit(
    std::filesystem::path const& cgroup_root, std::string_view self_cgroup
) {
    std::optional<std::uint64_t> smallest;
    auto const consider = [&](std::optional<std::uint64_t> limit) {
        if (limit) {
            smallest = std::min(smallest.value_or(*limit), *limit);
        }
    };
    std::istringstream lines{std::string(self_cgroup)};
    std::string line;
    while (std::getline(lines, line)) {
        // Each line is "hierarchy-id:controllers:path".
        auto const first = line.find(':');
        auto const second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) {
            continue;
        }
        std::string_view const text(line);
        auto const controllers = text.substr(first + 1, second - first - 1);
        auto const group = text.substr(second + 1);
        if (text.substr(0, first) == "0" && controllers.empty()) {
            // cgroup v2, mounted at the root or, on hybrid systems, at root/unified.
            consider(smallest_limit_up_to_root(cgroup_root, group, "memory.max"));
            consider(smallest_limit_up_to_root(cgroup_root / "unified", group, "memory.max"));
        } else if (lists_memory_controller(controllers)) {
            consider(smallest_limit_up_to_root(cgroup_root / "memory", group, "memory.limit_in_bytes"));
        }
    }
    return smallest;
}

std::uint64_t host_memory_capacity() {
    std::ifstream file("/proc/self/cgroup");
    std::stringstream text;
    text << file.rdbuf();
    auto const physical = physical_memory();
    return std::min(physical, cgroup_memory_limit("/sys/fs/cgroup", text.str()).value_or(physical));
}

}  // namespace spillway::memory
