#include <spillway/core/error.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <spillway/core/logging.hpp>

namespace spillway::detail {

namespace {

/// `message` followed by ` (file:line)`.
std::string located(std::string_view message, char const* file, int line) {
    std::string result(message);
    result += " (";
    result += std::filesystem::path(file).filename().string();
    result += ':';
    result += std::to_string(line);
    result += ')';
    return result;
}

}  // namespace

std::string raised_at(std::string message, char const* file, int line) {
    SPILLWAY_LOG(debug, "raised: " << located(message, file, line));
    return message;
}

void fatal(std::string_view message, char const* file, int line) noexcept {
    std::string const text = located(message, file, line);
    std::fprintf(stderr, "spillway FATAL: %s\n", text.c_str());
    std::fflush(stderr);
    std::abort();
}

}  // namespace spillway::detail
