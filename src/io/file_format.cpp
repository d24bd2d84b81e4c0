#include <spillway/io/file_format.hpp>

#include <algorithm>
#include <initializer_list>
#include <string>

#include <spillway/core/ascii_case.hpp>
#include <spillway/core/error.hpp>

namespace spillway::io {

std::string_view to_string(FileFormat format) noexcept {
    switch (format) {
        case FileFormat::csv: return "csv";
        case FileFormat::parquet: return "parquet";
        case FileFormat::arrow: return "arrow";
    }
    return "unknown";
}

FileFormat parse_file_format(std::string_view name) {
    auto const wanted = to_lower(name);
    for (auto const format : {FileFormat::csv, FileFormat::parquet, FileFormat::arrow}) {
        if (wanted == to_string(format)) {
            return format;
        }
    }
    SPILLWAY_EXPECTS(wanted == "feather", "unknown file format '" << name << "'; the formats are csv, parquet and arrow",
                     InvalidArgument);
    return FileFormat::arrow;
}

FileFormat format_of(std::filesystem::path const& path) {
    auto const extension = to_lower(path.extension().string());
    if (extension == ".parquet" || extension == ".pq") {
        return FileFormat::parquet;
    }
    if (extension == ".arrow" || extension == ".feather" || extension == ".ipc" || extension == ".arrows") {
        return FileFormat::arrow;
    }
    return FileFormat::csv;
}

bool is_tbl(std::filesystem::path const& path) { return to_lower(path.extension().string()) == ".tbl"; }

bool names_compressed_file(std::filesystem::path const& path) {
    auto const extension = to_lower(path.extension().string());
    return std::ranges::any_of(std::initializer_list<std::string_view>{".gz", ".bz2", ".xz", ".zst", ".lz4", ".zip"},
                               [&](std::string_view compressed) { return extension == compressed; });
}

std::string_view extension_of(FileFormat format) noexcept {
    switch (format) {
        case FileFormat::csv: return ".csv";
        case FileFormat::parquet: return ".parquet";
        case FileFormat::arrow: return ".arrow";
    }
    return "";
}

}  // namespace spillway::io
