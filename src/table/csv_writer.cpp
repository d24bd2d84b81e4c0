#include <spillway/table/csv_writer.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/table/date32.hpp>

namespace spillway::table {
namespace {

/// The buffer a writer fills before it writes to the file.
constexpr std::size_t write_buffer_bytes = std::size_t{1} << 20;

template <typename T>
void append_number(T value, std::string& out) {
    char text[32];
    auto const end = std::to_chars(text, text + sizeof(text), value).ptr;
    out.append(text, end);
}

void append_string(std::string_view value, CsvOptions const& options, std::string& out) {
    bool needs_quotes = value.empty();
    for (char const character : value) {
        if (character == options.delimiter || character == '\n' || character == '\r'
            || (options.quote && character == *options.quote)) {
            needs_quotes = true;
            break;
        }
    }
    if (!needs_quotes || (value.empty() && !options.quote)) {
        out += value;
        return;
    }
    SPILLWAY_EXPECTS(options.quote.has_value(),
                     "the string '" << value.substr(0, 40) << "' holds the delimiter or a line break and cannot be "
                                       "written without quoting (csv_quote)",
                     InvalidArgument);
    char const quote = *options.quote;
    out += quote;
    for (char const character : value) {
        if (character == quote) {
            out += quote;
        }
        out += character;
    }
    out += quote;
}

void append_value(Column const& column, std::size_t row, CsvOptions const& options, std::string& out) {
    if (column.is_null(row)) {
        return;
    }
    switch (column.type()) {
        case DataType::int32: append_number(column.values<std::int32_t>()[row], out); break;
        case DataType::int64: append_number(column.values<std::int64_t>()[row], out); break;
        case DataType::float64: append_number(column.values<double>()[row], out); break;
        case DataType::date32: {
            char text[max_date32_chars];
            out.append(text, format_date32(column.values<std::int32_t>()[row], text));
            break;
        }
        case DataType::string: append_string(column.string(row), options, out); break;
    }
}

}  // namespace

void append_csv_rows(Table const& table, CsvOptions const& options, std::string& out) {
    for (std::size_t row = 0; row < table.num_rows(); ++row) {
        for (std::size_t index = 0; index < table.num_columns(); ++index) {
            if (index != 0) {
                out += options.delimiter;
            }
            append_value(table.column(index), row, options, out);
        }
        if (options.trailing_delimiter) {
            out += options.delimiter;
        }
        out += '\n';
    }
}

void append_csv_header(Schema const& schema, CsvOptions const& options, std::string& out) {
    for (std::size_t index = 0; index < schema.size(); ++index) {
        if (index != 0) {
            out += options.delimiter;
        }
        append_string(schema.field(index).name, options, out);
    }
    if (options.trailing_delimiter) {
        out += options.delimiter;
    }
    out += '\n';
}

CsvWriter::CsvWriter(std::filesystem::path path, CsvOptions options, Schema const& schema)
    : path_(path.string()), options_(options) {
    options_.validate();
    descriptor_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    SPILLWAY_EXPECTS(descriptor_ >= 0, "cannot create CSV file '" << path_ << "': " << std::strerror(errno), IoError);
    buffer_.reserve(write_buffer_bytes);
    if (options_.header) {
        append_csv_header(schema, options_, buffer_);
        bytes_written_ += buffer_.size();
    }
}

CsvWriter::~CsvWriter() {
    if (descriptor_ >= 0) {
        try {
            flush();
        } catch (IoError const&) {  // documented: call close() to see write errors
        }
        ::close(descriptor_);
    }
}

void CsvWriter::write(Table const& table) {
    SPILLWAY_EXPECTS(descriptor_ >= 0, "writing to the closed CSV file '" << path_ << "'", InvalidArgument);
    auto const before = buffer_.size();
    append_csv_rows(table, options_, buffer_);
    bytes_written_ += buffer_.size() - before;
    if (buffer_.size() >= write_buffer_bytes) {
        flush();
    }
}

void CsvWriter::write_rows(std::string_view rows) {
    SPILLWAY_EXPECTS(descriptor_ >= 0, "writing to the closed CSV file '" << path_ << "'", InvalidArgument);
    buffer_ += rows;
    bytes_written_ += rows.size();
    if (buffer_.size() >= write_buffer_bytes) {
        flush();
    }
}

void CsvWriter::flush() {
    std::size_t written = 0;
    while (written < buffer_.size()) {
        auto const count = ::write(descriptor_, buffer_.data() + written, buffer_.size() - written);
        if (count < 0 && errno == EINTR) {
            continue;
        }
        SPILLWAY_EXPECTS(count >= 0, "cannot write CSV file '" << path_ << "': " << std::strerror(errno), IoError);
        written += static_cast<std::size_t>(count);
    }
    buffer_.clear();
}

void CsvWriter::close() {
    if (descriptor_ < 0) {
        return;
    }
    flush();
    auto const descriptor = std::exchange(descriptor_, -1);
    SPILLWAY_EXPECTS(::close(descriptor) == 0, "cannot close CSV file '" << path_ << "': " << std::strerror(errno),
                     IoError);
}

}  // namespace spillway::table
