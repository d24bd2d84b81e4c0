#include "table_input.hpp"

#include <algorithm>

#include <spillway/core/error.hpp>

#include "input_files.hpp"
#include "key_columns.hpp"

namespace spillway::cli {
namespace {

/// Whether `type` is one of the integer types, which files may mix.
bool is_integer(table::DataType type) noexcept {
    return type == table::DataType::int32 || type == table::DataType::int64;
}

/// Where each column of `first` is in `schema`, the columns of `file`, as
/// `match_column_names` says.
/// @throws CorruptData as `match_column_names`, and naming the column if its
///         types differ (but for int32 and int64).
std::vector<std::size_t> match_columns(table::Schema const& first, std::filesystem::path const& first_file,
                                       table::Schema const& schema, std::filesystem::path const& file) {
    std::vector<std::string> names;
    for (auto const& field : schema.fields()) {
        names.push_back(field.name);
    }
    auto order = match_column_names(first, first_file, names, file);
    for (std::size_t column = 0; column < first.size(); ++column) {
        auto const& field = first.field(column);
        auto const type = schema.field(order.empty() ? column : order[column]).type;
        SPILLWAY_EXPECTS(type == field.type || (is_integer(type) && is_integer(field.type)),
                         "column '" << field.name << "' is " << to_string(type) << " in '" << file.string()
                                    << "' but " << to_string(field.type) << " in '" << first_file.string()
                                    << "'; a column has one type in every file, or int32 in some and int64 in others",
                         CorruptData);
    }
    return order;
}

/// The values of `column`, an int32 column, as int64.
table::Column to_int64(table::Column const& column) {
    auto const values = column.values<std::int32_t>();
    table::ColumnBuffer data(values.size() * sizeof(std::int64_t));
    std::copy(values.begin(), values.end(), reinterpret_cast<std::int64_t*>(data.data()));
    auto const validity = column.validity_buffer();
    return table::Column::from_buffers(table::DataType::int64, column.size(),
                                       table::ColumnBuffer(validity.begin(), validity.end()), std::move(data), {});
}

}  // namespace

TableInput TableInput::open(std::vector<std::filesystem::path> files, std::vector<std::string> const& keys,
                            io::FileFormat format) {
    SPILLWAY_EXPECTS(!files.empty(), "no input file was given; name the files with --input", InvalidArgument);
    SPILLWAY_ASSERT(format != io::FileFormat::csv, "CSV input is CsvInput's");
    TableInput input;
    input.format = format;
    std::vector<table::Schema> schemas;         // by file, each file's own
    std::vector<std::uint64_t> largest_reads;  // by file, the most column data one read returns
    for (auto const& file : files) {
        auto const size = input_file_size(file);
        input.bytes += size;
        auto const reader = io::open_table_file(file, format);
        if (input.column_orders.empty()) {
            input.schema = reader->schema();
        }
        schemas.push_back(reader->schema());
        input.column_orders.push_back(match_columns(input.schema, files.front(), reader->schema(), file));
        input.file_rows.push_back(reader->rows().value_or(0));
        input.file_reads.push_back(reader->reads());
        input.rows += input.file_rows.back();
        input.reader_bytes = std::max(input.reader_bytes, reader->held_bytes());
        // A file that does not say how large its reads are is bounded by its size.
        auto const largest = reader->largest_read_bytes();
        largest_reads.push_back(largest != 0 ? largest : size);
    }
    // The type of the first file's column `column` in file `file`.
    auto const type_in = [&](std::size_t file, std::size_t column) {
        auto const& order = input.column_orders[file];
        return schemas[file].field(order.empty() ? column : order[column]).type;
    };
    // A column of int32 in some files and int64 in others is int64.
    auto fields = input.schema.fields();
    for (std::size_t file = 0; file < schemas.size(); ++file) {
        for (std::size_t column = 0; column < fields.size(); ++column) {
            if (type_in(file, column) == table::DataType::int64) {
                fields[column].type = table::DataType::int64;
            }
        }
    }
    input.schema = table::Schema(std::move(fields));
    for (std::size_t file = 0; file < schemas.size(); ++file) {
        auto& widened = input.widened_columns.emplace_back();
        for (std::size_t column = 0; column < input.schema.size(); ++column) {
            if (type_in(file, column) != input.schema.field(column).type) {
                widened.push_back(column);
            }
        }
        // A widened column takes 4 bytes more a row than the file says.
        auto const widening = widened.size() * (sizeof(std::int64_t) - sizeof(std::int32_t)) * io::rows_per_read;
        input.largest_read_bytes = std::max(input.largest_read_bytes, largest_reads[file] + widening);
    }
    input.keys = resolve_keys(input.schema, keys);
    input.files = std::move(files);
    return input;
}

TableSource::TableSource(TableInput const& input, std::vector<std::size_t> files, Opener open)
    : input_(input), files_(std::move(files)), open_(std::move(open)) {
    if (!open_) {
        open_ = [&input](std::size_t file) { return io::open_table_file(input.files[file], input.format); };
    }
}

std::optional<FileTable> TableSource::operator()() {
    while (true) {
        if (!reader_) {
            if (next_file_ == files_.size()) {
                return std::nullopt;
            }
            reader_ = open_(files_[next_file_]);
            ++next_file_;
        }
        if (auto table = reader_->read()) {
            auto const file = files_[next_file_ - 1];
            auto const& order = input_.column_orders[file];
            auto ordered = order.empty() ? std::move(*table) : table->select(order);
            auto const& widened = input_.widened_columns[file];
            if (widened.empty()) {
                return FileTable{file, std::move(ordered)};
            }
            auto columns = std::move(ordered).release_columns();
            for (auto const column : widened) {
                columns[column] = to_int64(columns[column]);
            }
            return FileTable{file, table::Table(input_.schema, std::move(columns))};
        }
        reader_.reset();
    }
}

}  // namespace spillway::cli
