#include <spillway/core/error.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace spillway::detail {

std::string with_location(std::string_view message, char const* file, int line) {
    std::string result(message);
    result += " (";
    result += std::filesystem::path(file).filename().string();
    result += ':';
    result += std::to_string(line);
    result += ')';
    return result;
}

void fatal(std::string_view message, char const* file, int line) noexcept {
    std::string const text = with_location(message, file, line);
    std::fprintf(stderr, "spillway FATAL: %s\n", text.c_str());
    std::fflush(stderr);
    std::abort();
}

}  // namespace spillway::detail
