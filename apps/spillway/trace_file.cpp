#include "trace_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <spillway/core/error.hpp>
#include <spillway/core/trace.hpp>

#include "staged_output.hpp"

namespace spillway::cli {

TraceFile::TraceFile(std::filesystem::path path) : path_(std::move(path)) {
    if (path_.empty()) {
        return;
    }
    std::error_code error;
    created_ = !std::filesystem::exists(path_, error) && !error;
    if (created_) {
        removal_.emplace(path_);
    }
    // Opened to append, so that a file already there stays as it is until `write`.
    std::ofstream probe(path_, std::ios::binary | std::ios::app);
    SPILLWAY_EXPECTS(probe.good(), "cannot create the trace file '" << path_.string() << "': " << std::strerror(errno)
                                   << "; give --trace a writable path", IoError);
    trace::start();
    trace::name_this_thread("main");
}

TraceFile::~TraceFile() {
    if (path_.empty()) {
        return;
    }
    trace::stop();
    if (created_ && !written_) {
        std::error_code ignored;
        std::filesystem::remove(path_, ignored);
    }
}

void TraceFile::write() {
    if (path_.empty()) {
        return;
    }
    trace::stop();
    std::error_code error;
    if (std::filesystem::is_regular_file(path_, error)) {
        // Written beside it and renamed, so that a failed write (a full disk)
        // leaves the file that was there whole.
        StagedFile staged(path_);
        trace::write(staged.staging());
        staged.commit();
    } else {
        trace::write(path_);  // a device such as /dev/null
    }
    written_ = true;
    removal_.reset();
}

}  // namespace spillway::cli
