#include <spillway/io/table_file.hpp>

#include <spillway/core/error.hpp>

#include "compression.hpp"
#include "formats.hpp"

namespace spillway::io {

std::unique_ptr<TableFileReader> open_table_file(std::filesystem::path const& path, FileFormat format,
                                                 io::CsvOptions const& csv, std::optional<table::Schema> schema) {
    switch (format) {
        case FileFormat::csv: return detail::open_csv_file(path, csv, std::move(schema));
        case FileFormat::parquet: return detail::open_parquet_file(path);
        case FileFormat::arrow: return detail::open_arrow_file(path);
    }
    SPILLWAY_FAIL("unknown file format " << static_cast<int>(format), InvalidArgument);
}

std::unique_ptr<TableFileWriter> create_table_file(std::filesystem::path const& path, FileFormat format,
                                                   table::Schema const& schema, WriteOptions const& options) {
    switch (format) {
        case FileFormat::csv: return detail::create_csv_file(path, schema, options);
        case FileFormat::parquet: return detail::create_parquet_file(path, schema, options);
        case FileFormat::arrow: return detail::create_arrow_file(path, schema, options);
    }
    SPILLWAY_FAIL("unknown file format " << static_cast<int>(format), InvalidArgument);
}

void check_compression(FileFormat format, WriteOptions const& options) {
    if (format != FileFormat::csv) {
        static_cast<void>(detail::compression_of(options, format == FileFormat::parquet));
    }
}

std::uint64_t writer_overhead_bytes(FileFormat format, table::Schema const& schema) noexcept {
    constexpr std::uint64_t kibibyte = 1024;
    return format == FileFormat::parquet ? 192 * kibibyte + 4 * kibibyte * schema.size() : 0;
}

std::uint64_t writer_flush_bytes(FileFormat format, std::uint64_t row_group_bytes) noexcept {
    constexpr std::uint64_t pages_and_codec = std::uint64_t{3} << 20;
    return format == FileFormat::parquet ? 2 * row_group_bytes + pages_and_codec : 0;
}

namespace detail {

void check_writable(table::Table const& table, table::Schema const& schema, bool closed,
                    std::filesystem::path const& path) {
    SPILLWAY_EXPECTS(!closed, "'" << path.string() << "' is closed; nothing more can be written to it",
                     InvalidArgument);
    SPILLWAY_EXPECTS(table.schema() == schema,
                     "rows of the columns " << table.schema().to_string() << " cannot go to '" << path.string()
                                            << "', whose columns are " << schema.to_string(),
                     InvalidArgument);
}

}  // namespace detail
}  // namespace spillway::io
