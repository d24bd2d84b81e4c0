#include "input_files.hpp"

#include <glob.h>

#include <algorithm>
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

std::vector<std::size_t> match_column_names(
    table::Schema const& first, std::filesystem::path const& first_file, std::vector<std::string> const& names,
    std::filesystem::path const& file
) {
    std::vector<std::size_t> order;
    for (std::size_t column = 0; column < first.size(); ++column) {
        auto const& name = first.field(column).name;
        auto const found = std::ranges::find(names, name);
        SPILLWAY_EXPECTS(found != names.end(),
                         "'" << file.string() << "' has no column '" << name << "', which '" << first_file.string()
                             << "' has; every input file must have the same columns (in any order)",
                         CorruptData);
        order.push_back(static_cast<std::size_t>(found - names.begin()));
    }
    for (auto const& name : names) {
        SPILLWAY_EXPECTS(first.find(name).has_value(),
                         "'" << file.string() << "' has a column '" << name << "', which '" << first_file.string()
                             << "' does not have; every input file must have the same columns (in any order)",
                         CorruptData);
    }
    bool const same_order = std::ranges::is_sorted(order) && std::ranges::adjacent_find(order) == order.end();
    return same_order ? std::vector<std::size_t>() : order;
}

std::vector<std::size_t> file_share(std::size_t files, std::size_t rank, std::size_t ranks) {
    std::vector<std::size_t> share;
    for (auto file = rank; file < files; file += ranks) {
        share.push_back(file);
    }
    return share;
}

}  // namespace spillway::cli
