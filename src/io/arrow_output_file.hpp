#pragma once
/// @file
/// The file an Arrow-backed writer (Parquet, Arrow IPC) writes into.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <arrow/io/file.h>

namespace spillway::io::detail {

/// An output stream on a new file, closed once, whose size is known after.
/// Once a write or the close has failed (with any exception: the format's
/// writer may have written part, or dropped what it held), the file is
/// incomplete: every later `write` and `close` throws instead of adding to
/// it, and `close` closes the stream.
///
/// Thread safety: externally synchronized.
class ArrowOutputFile {
  public:
    /// Creates (or truncates) `path`.
    /// @throws IoError with `what` if it cannot be created.
    ArrowOutputFile(std::filesystem::path path, std::string const& what);

    /// The stream the format's writer writes to.
    [[nodiscard]] std::shared_ptr<arrow::io::FileOutputStream> const& stream() const noexcept { return stream_; }
    /// The file's path.
    [[nodiscard]] std::filesystem::path const& path() const noexcept { return path_; }
    /// Whether `close` succeeded.
    [[nodiscard]] bool closed() const noexcept { return closed_; }

    /// Runs `action`, which writes to `stream()`.
    /// @throws IoError naming the file, without running `action`, if a write
    ///         or the close failed before; what `action` throws.
    void write(std::function<void()> const& action);

    /// Runs `finish_writer` (which writes the format's footer and may close
    /// the stream), closes the stream if it is still open, and records the
    /// file's size; does nothing if it succeeded before.
    /// @throws IoError naming the file if a write or the close failed before;
    ///         IoError (or what `finish_writer` throws) naming the file.
    void close(std::function<void(std::string const& what)> const& finish_writer);

    /// The bytes written so far: the stream's position, or the file's size
    /// once closed.
    [[nodiscard]] std::uint64_t bytes_written() const noexcept;

  private:
    std::filesystem::path path_;
    std::shared_ptr<arrow::io::FileOutputStream> stream_;
    std::uint64_t written_ = 0;
    bool closed_ = false;
    bool failed_ = false;  ///< a write or the close threw
};

}  // namespace spillway::io::detail
