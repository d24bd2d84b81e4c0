#pragma once
/// @file
/// `--trace FILE`: records trace events for the length of a job and writes
/// them to a file.

#include <filesystem>
#include <optional>

#include "interruption.hpp"

namespace spillway::cli {

/// Records trace events (core/trace.hpp) from construction until `write`,
/// when a path was given; does nothing otherwise.
///
/// Thread safety: externally synchronized; one per process at a time (the
/// recorder is process-wide).
class TraceFile {
  public:
    /// Creates `path` if it is missing, leaving a file already there as it
    /// is (so that an unwritable path fails before the job starts), and
    /// starts recording; with an empty path, does nothing.
    /// @throws IoError naming `path` if it cannot be created.
    explicit TraceFile(std::filesystem::path path);
    /// Stops recording, and removes the file if the constructor created it
    /// and `write` did not write it, so that a job that could not start
    /// leaves no empty trace behind; SIGINT and SIGTERM remove it too, until `write`
    /// (`RemoveOnInterruption`). A path that existed (a file being
    /// overwritten, /dev/null) is never removed.
    ~TraceFile();
    TraceFile(TraceFile const&) = delete;
    TraceFile& operator=(TraceFile const&) = delete;

    /// Stops recording and writes the events to the file, replacing what it
    /// held: after a job that ran, whether it succeeded or failed. A regular
    /// file is written beside it and renamed into place (`StagedFile`), so a
    /// write that fails leaves it as it was.
    /// @throws IoError naming the file written if it cannot be written.
    void write();

  private:
    std::filesystem::path path_;  ///< empty: not tracing
    bool created_ = false;        ///< whether the constructor created the file
    bool written_ = false;        ///< whether `write` wrote the file
    std::optional<RemoveOnInterruption> removal_;  ///< if `created_`, until `write` wrote the file
};

}  // namespace spillway::cli
