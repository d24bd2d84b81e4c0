#include "input_files.hpp"

#include <glob.h>

#include <string>

#include <spillway/core/error.hpp>

namespace spillway::cli {

std::vector<std::filesystem::path> expand_inputs(std::vector<std::filesystem::path> const& inputs) {
    std::vector<std::filesystem::path> files;
    for (auto const& input : inputs) {
        auto const name = input.string();
        if (name.find_first_of("*?[") == std::string::npos) {
            files.push_back(input);
            continue;
        }
        glob_t matches{};
        int const result = ::glob(name.c_str(), 0, nullptr, &matches);
        for (std::size_t index = 0; result == 0 && index < matches.gl_pathc; ++index) {
            files.emplace_back(matches.gl_pathv[index]);
        }
        ::globfree(&matches);
        SPILLWAY_EXPECTS(result == 0, "no input file matches '" << name << "'", InvalidArgument);
    }
    return files;
}

std::uint64_t input_file_size(std::filesystem::path const& file) {
    std::error_code error;
    auto const status = std::filesystem::status(file, error);
    SPILLWAY_EXPECTS(std::filesystem::exists(status), "input file '" << file.string() << "' does not exist",
                     InvalidArgument);
    SPILLWAY_EXPECTS(std::filesystem::is_regular_file(status), "input '" << file.string() << "' is not a regular file",
                     InvalidArgument);
    return std::filesystem::file_size(file);
}

std::vector<std::size_t> file_share(std::size_t files, std::size_t rank, std::size_t ranks) {
    std::vector<std::size_t> share;
    for (auto file = rank; file < files; file += ranks) {
        share.push_back(file);
    }
    return share;
}

}  // namespace spillway::cli
