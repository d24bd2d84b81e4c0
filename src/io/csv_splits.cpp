#include <spillway/io/csv_splits.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include <spillway/core/error.hpp>
#include <spillway/core/file_descriptor.hpp>
#include <spillway/io/csv_reader.hpp>

#include "csv_scanner.hpp"

namespace spillway::io {
namespace {

/// Opens `path` for reading.
/// @throws IoError naming it if it cannot be opened.
FileDescriptor open_for_reading(std::string const& path) {
    FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    SPILLWAY_EXPECTS(file, "cannot open CSV file '" << path << "': " << std::strerror(errno), IoError);
    return file;
}

}  // namespace

CsvSplits::CsvSplits(std::filesystem::path path, CsvOptions options, table::Schema schema,
                     std::uint64_t split_bytes) {
    options.validate();
    SPILLWAY_EXPECTS(!options.quote.has_value() && !options.header,
                     "'" << path.string() << "' can be split at line breaks only in a dialect without quotes "
                         << "and without a header, such as TPC-H's .tbl",
                     InvalidArgument);
    SPILLWAY_EXPECTS(split_bytes > 0, "CSV splits need at least 1 byte each", InvalidArgument);
    source_ = std::make_shared<detail::CsvSource const>(
        detail::CsvSource{path.string(), options, std::move(schema)});
    auto const& name = source_->path;
    auto const file = open_for_reading(name);

    // A split starts with the first row that starts `split_bytes` or more
    // after the one before: just after the first line break at or after
    // `target - 1`.
    std::vector<char> buffer(std::size_t{1} << 20);
    std::uint64_t position = 0;  // of the buffer's first byte in the file
    std::uint64_t line = 1;      // at `position + counted`
    std::uint64_t target = split_bytes;
    while (true) {
        auto const count = ::read(file.get(), buffer.data(), buffer.size());
        if (count < 0 && errno == EINTR) {
            continue;
        }
        SPILLWAY_EXPECTS(count >= 0, "cannot read CSV file '" << name << "': " << std::strerror(errno), IoError);
        if (count == 0) {
            break;
        }
        if (starts_.empty()) {
            starts_.push_back({0, 1});
        }
        std::string_view const text(buffer.data(), static_cast<std::size_t>(count));
        std::size_t counted = 0;  // the bytes of `text` whose line breaks `line` counts
        while (target - 1 < position + text.size()) {
            auto const from = static_cast<std::size_t>(std::max(target - 1, position + counted) - position);
            auto const found = text.find('\n', from);
            if (found == std::string_view::npos) {
                break;  // on in the next buffer
            }
            line += detail::count_line_breaks(text.substr(counted, found + 1 - counted));
            counted = found + 1;
            starts_.push_back({position + counted, line});
            target = position + counted + split_bytes;
        }
        line += detail::count_line_breaks(text.substr(counted));
        position += text.size();
    }
    file_bytes_ = position;
    if (!starts_.empty() && starts_.back().offset == file_bytes_) {
        starts_.pop_back();  // the file's last line break starts no row
    }
}

table::Schema const& CsvSplits::schema() const noexcept { return source_->schema; }

table::Table CsvSplits::read(std::size_t split, std::span<std::string const> columns) const {
    auto const& name = source_->path;
    SPILLWAY_EXPECTS(split < starts_.size(), "split " << split << " of '" << name << "', which has " << size(),
                     InvalidArgument);
    std::vector<std::size_t> indices;
    for (auto const& column : columns) {
        auto const index = schema().find(column);
        SPILLWAY_EXPECTS(index.has_value(),
                         "'" << name << "' has no column '" << column << "'; its columns are "
                             << schema().to_string(),
                         InvalidArgument);
        indices.push_back(*index);
    }
    std::ranges::sort(indices);

    auto const begin = starts_[split].offset;
    auto const end = split + 1 < starts_.size() ? starts_[split + 1].offset : file_bytes_;
    auto const bytes = static_cast<std::size_t>(end - begin);
    auto text = std::make_unique_for_overwrite<char[]>(bytes + 1);
    auto const file = open_for_reading(name);
    std::size_t done = 0;
    while (done < bytes) {
        auto const count = ::pread(file.get(), text.get() + done, bytes - done, static_cast<off_t>(begin + done));
        if (count < 0 && errno == EINTR) {
            continue;
        }
        SPILLWAY_EXPECTS(count >= 0, "cannot read CSV file '" << name << "': " << std::strerror(errno), IoError);
        SPILLWAY_EXPECTS(count > 0,
                         "'" << name << "' ended at byte " << begin + done << ", before its split " << split
                             << " did: it was shortened after it was opened",
                         IoError);
        done += static_cast<std::size_t>(count);
    }
    auto size = bytes;
    if (text[size - 1] != '\n') {
        text[size++] = '\n';  // the file's last row, without its line break
    }
    auto const line_breaks = detail::count_line_breaks(std::string_view(text.get(), size));
    CsvBlock const block(source_, std::move(text), size, starts_[split].line, line_breaks);
    return block.parse_columns(indices).columns;
}

}  // namespace spillway::io
