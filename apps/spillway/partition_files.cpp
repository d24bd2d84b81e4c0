#include "partition_files.hpp"

#include <sys/resource.h>

#include <cstdio>
#include <string>

#include <spillway/core/error.hpp>
#include <spillway/io/file_format.hpp>

namespace spillway::cli {
namespace {

/// Descriptors the process needs besides the partition files: the standard
/// streams, the input, libraries, the spill directory, a margin.
constexpr std::uint64_t other_descriptors = 64;

}  // namespace

std::filesystem::path partition_file(std::filesystem::path const& directory, std::uint32_t partition,
                                     std::string_view extension) {
    char name[32];
    std::snprintf(name, sizeof name, "part-%05u", partition);
    return directory / (std::string(name) + std::string(extension));
}

std::string csv_partition_extension(std::filesystem::path const& input) {
    bool const own = input.has_extension() && io::format_of(input) == io::FileFormat::csv
                  && !io::names_compressed_file(input);
    return own ? input.extension().string() : std::string(io::extension_of(io::FileFormat::csv));
}

void check_open_file_limit(std::uint32_t partitions) {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
        return;
    }
    SPILLWAY_EXPECTS(partitions + other_descriptors <= limit.rlim_cur,
                     "--partitions " << partitions << " keeps " << partitions << " files open, but this process may "
                                     << "open only " << limit.rlim_cur << " (ulimit -n); lower --partitions to at most "
                                     << (limit.rlim_cur > other_descriptors ? limit.rlim_cur - other_descriptors : 0)
                                     << " or raise the limit",
                     InvalidArgument);
}

}  // namespace spillway::cli
