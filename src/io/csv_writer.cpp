#include <spillway/io/csv_writer.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/table/date32.hpp>
#include <spillway/table/timestamp.hpp>

#include "csv_file_start.hpp"

namespace spillway::io {

using table::Column;
using table::DataType;
using table::format_date32;
using table::format_timestamp;
using table::max_date32_chars;
using table::max_timestamp_chars;
using table::Schema;
using table::Table;
namespace {


template <typename T>
void append_number(T value, std::string& out) {
    if constexpr (std::is_floating_point_v<T>) {
        if (value == 0 && std::signbit(value)) {
            // Not `-0`, its shortest form: that is no number to inference
            // (an integer spelled other than exactly), so the column would
            // be read back as text, its keys hashed as other keys.
            out += "-0.0";
            return;
        }
    }
    char text[32];
    auto const end = std::to_chars(text, text + sizeof(text), value).ptr;
    out.append(text, end);
}

/// Writes strings in one CSV dialect: knows which bytes force quotes.
class StringWriter {
  public:
    explicit StringWriter(CsvOptions const& options) : options_(options) {
        for (char const special : {options.delimiter, '\n', '\r', options.quote.value_or(options.delimiter)}) {
            needs_quotes_[static_cast<unsigned char>(special)] = true;
        }
    }

    void append(std::string_view value, std::string& out) const {
        // A value that would begin a file unread as text is quoted wherever
        // it is: it may be the file's first.
        bool const needs_quotes = value.empty() || std::ranges::any_of(value, [&](char character) {
            return needs_quotes_[static_cast<unsigned char>(character)];
        }) || (options_.quote && detail::read_otherwise_at_file_start(value));
        if (!needs_quotes || (value.empty() && !options_.quote)) {
            out += value;
            return;
        }
        SPILLWAY_EXPECTS(options_.quote.has_value(),
                         "the string '" << value.substr(0, 40) << "' holds the delimiter or a line break and cannot "
                                                                   "be written without quoting (csv_quote)",
                         InvalidArgument);
        char const quote = *options_.quote;
        out += quote;
        for (auto rest = value;;) {
            auto const at = rest.find(quote);
            out.append(rest.substr(0, at));
            if (at == std::string_view::npos) {
                break;
            }
            out += quote;  // doubled
            out += quote;
            rest.remove_prefix(at + 1);
        }
        out += quote;
    }

  private:
    CsvOptions const& options_;
    std::array<bool, 256> needs_quotes_{};  ///< bytes that force a string into quotes
};

/// What formatting a column's values reads, fetched once per table.
struct ColumnView {
    Column const* column;
    DataType type;
    std::byte const* data;
    std::span<std::int32_t const> offsets;  ///< string only
    char const* characters;                 ///< string only

    explicit ColumnView(Column const& source)
        : column(&source),
          type(source.type()),
          data(source.data_buffer().data()),
          offsets(type == DataType::string ? source.offsets() : std::span<std::int32_t const>()),
          characters(type == DataType::string ? source.characters().data() : nullptr) {}

    template <typename T>
    T value(std::size_t row) const noexcept {
        T result;
        std::memcpy(&result, data + row * sizeof(T), sizeof(T));
        return result;
    }

    void append(std::size_t row, StringWriter const& strings, std::string& out) const {
        if (column->is_null(row)) {
            return;
        }
        switch (type) {
            case DataType::int32: append_number(value<std::int32_t>(row), out); break;
            case DataType::int64: append_number(value<std::int64_t>(row), out); break;
            case DataType::float64: append_number(value<double>(row), out); break;
            case DataType::date32: {
                char text[max_date32_chars];
                out.append(text, format_date32(value<std::int32_t>(row), text));
                break;
            }
            case DataType::string:
                strings.append(std::string_view(characters + offsets[row],
                                                static_cast<std::size_t>(offsets[row + 1] - offsets[row])),
                               out);
                break;
            case DataType::boolean: out += value<std::uint8_t>(row) != 0 ? "true" : "false"; break;
            case DataType::timestamp_ms:
            case DataType::timestamp_us:
            case DataType::timestamp_ns:
            case DataType::timestamp_ms_utc:
            case DataType::timestamp_us_utc:
            case DataType::timestamp_ns_utc: {
                // Through the string writer: a space, `:` or `+` may be the delimiter.
                char text[max_timestamp_chars];
                strings.append({text, format_timestamp(value<std::int64_t>(row), type, text)}, out);
                break;
            }
        }
    }
};

/// The bytes of the first row of `rows`, CSV text quoted with `quote`, its
/// line break included: up to the first `\n` outside quotes.
std::size_t first_row_bytes(std::string_view rows, char quote) {
    bool inside_quotes = false;
    for (std::size_t index = 0; index < rows.size(); ++index) {
        if (rows[index] == quote) {
            inside_quotes = !inside_quotes;
        } else if (rows[index] == '\n' && !inside_quotes) {
            return index + 1;
        }
    }
    return rows.size();
}

}  // namespace

std::size_t append_csv_rows(Table const& table, CsvOptions const& options, std::string& out) {
    StringWriter const strings(options);
    std::vector<ColumnView> const columns(table.columns().begin(), table.columns().end());
    auto const before = out.size();
    std::size_t longest = 0;
    try {
        for (std::size_t row = 0; row < table.num_rows(); ++row) {
            auto const row_start = out.size();
            for (std::size_t index = 0; index < columns.size(); ++index) {
                if (index != 0) {
                    out += options.delimiter;
                }
                columns[index].append(row, strings, out);
            }
            if (options.trailing_delimiter) {
                out += options.delimiter;
            }
            out += '\n';
            longest = std::max(longest, out.size() - row_start);
        }
    } catch (...) {
        out.resize(before);  // no half-written row for a writer to flush
        throw;
    }
    return longest;
}

std::size_t append_csv_header(Schema const& schema, CsvOptions const& options, std::string& out) {
    auto const before = out.size();
    StringWriter const strings(options);
    for (std::size_t index = 0; index < schema.size(); ++index) {
        if (index != 0) {
            out += options.delimiter;
        }
        strings.append(schema.field(index).name, out);
    }
    if (options.trailing_delimiter) {
        out += options.delimiter;
    }
    out += '\n';
    return out.size() - before;
}

CsvWriter::CsvWriter(std::filesystem::path path, CsvOptions options, Schema const& schema, std::size_t buffer_bytes)
    : path_(path.string()), options_(options), buffer_bytes_(buffer_bytes) {
    options_.validate();
    SPILLWAY_EXPECTS(buffer_bytes_ > 0, "a CSV writer needs a buffer of at least 1 byte", InvalidArgument);
    buffer_.reserve(buffer_bytes_);
    if (options_.header) {
        longest_row_bytes_ = append_csv_header(schema, options_, buffer_);
        bytes_written_ += buffer_.size();
    }
    descriptor_ = FileDescriptor(::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    SPILLWAY_EXPECTS(descriptor_, "cannot create CSV file '" << path_ << "': " << std::strerror(errno), IoError);
}

CsvWriter::~CsvWriter() {
    if (descriptor_ && !failed_) {
        try {
            flush();
        } catch (IoError const&) {  // documented: call close() to see write errors
        }
    }
}

void CsvWriter::write(Table const& table) {
    check_not_failed();
    SPILLWAY_EXPECTS(descriptor_, "writing to the closed CSV file '" << path_ << "'", InvalidArgument);
    auto const before = buffer_.size();
    longest_row_bytes_ = std::max(longest_row_bytes_, append_csv_rows(table, options_, buffer_));
    bytes_written_ += buffer_.size() - before;
    if (buffer_.size() >= buffer_bytes_) {
        flush();
    }
}

void CsvWriter::write_rows(std::string_view rows) {
    check_not_failed();
    SPILLWAY_EXPECTS(descriptor_, "writing to the closed CSV file '" << path_ << "'", InvalidArgument);
    if (bytes_written_ == 0 && options_.quote && !rows.starts_with(*options_.quote)
        && detail::read_otherwise_at_file_start(rows)) {
        // The file's first field, unquoted, begins as a byte order mark or a
        // binary file does: quoted as a string value is, the file reads back
        // as text from its start.
        auto const field = rows.substr(0, std::min(rows.find(options_.delimiter), rows.find_first_of("\r\n")));
        std::string quoted;
        StringWriter(options_).append(field, quoted);
        quoted += rows.substr(field.size());
        longest_row_bytes_ = std::max(longest_row_bytes_, first_row_bytes(quoted, *options_.quote));
        append_rows(quoted);
        return;
    }
    append_rows(rows);
}

void CsvWriter::append_rows(std::string_view rows) {
    bytes_written_ += rows.size();
    if (buffer_.size() + rows.size() > buffer_bytes_) {
        flush();
    }
    if (rows.size() >= buffer_bytes_) {
        write_all(rows);
    } else {
        buffer_ += rows;
    }
}

void CsvWriter::flush() {
    write_all(buffer_);
    buffer_.clear();
}

void CsvWriter::write_all(std::string_view bytes) {
    std::size_t written = 0;
    while (written < bytes.size()) {
        auto const count = ::write(descriptor_.get(), bytes.data() + written, bytes.size() - written);
        if (count < 0 && errno == EINTR) {
            continue;
        }
        if (count < 0) {
            auto const error = errno;
            failed_ = true;
            SPILLWAY_FAIL("cannot write CSV file '" << path_ << "': " << std::strerror(error), IoError);
        }
        written += static_cast<std::size_t>(count);
    }
}

void CsvWriter::check_not_failed() const {
    SPILLWAY_EXPECTS(!failed_, "'" << path_ << "' is incomplete: writing it failed before", IoError);
}

void CsvWriter::close() {
    if (failed_) {
        descriptor_ = FileDescriptor();
        check_not_failed();
    }
    if (!descriptor_) {
        return;
    }
    try {
        flush();
    } catch (IoError const&) {
        descriptor_ = FileDescriptor();
        throw;
    }
    if (::close(descriptor_.release()) != 0) {
        auto const error = errno;
        failed_ = true;
        SPILLWAY_FAIL("cannot close CSV file '" << path_ << "': " << std::strerror(error), IoError);
    }
}

}  // namespace spillway::io
