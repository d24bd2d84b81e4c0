#include "arrow_output_file.hpp"

#include <spillway/core/error.hpp>

#include "arrow_tables.hpp"

namespace spillway::io::detail {

ArrowOutputFile::ArrowOutputFile(std::filesystem::path path, std::string const& what)
    : path_(std::move(path)), stream_(value_of(arrow::io::FileOutputStream::Open(path_.string()), what)) {}

void ArrowOutputFile::write(std::function<void()> const& action) {
    SPILLWAY_EXPECTS(!failed_, "'" << path_.string() << "' is incomplete: writing it failed before", IoError);
    try {
        action();
    } catch (...) {
        failed_ = true;
        throw;
    }
}

void ArrowOutputFile::close(std::function<void(std::string const& what)> const& finish_writer) {
    if (closed_) {
        return;
    }
    if (failed_ && !stream_->closed()) {
        static_cast<void>(stream_->Close());  // its error is the earlier one's consequence
    }
    auto const what = "cannot finish '" + path_.string() + "'";
    write([&] {
        finish_writer(what);
        if (!stream_->closed()) {
            check(stream_->Close(), what);
        }
    });
    closed_ = true;
    std::error_code error;
    written_ = std::filesystem::file_size(path_, error);
    SPILLWAY_EXPECTS(!error, what << ": " << error.message(), IoError);
}

std::uint64_t ArrowOutputFile::bytes_written() const noexcept {
    if (closed_) {
        return written_;
    }
    auto const position = stream_->Tell();
    return position.ok() ? static_cast<std::uint64_t>(*position) : 0;
}

}  // namespace spillway::io::detail
