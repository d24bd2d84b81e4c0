#pragma once
/// @file
/// Reading and writing spill files: an open file that turns system-call
/// failures into errors naming its path, and staged writers and readers that
/// move a codec's stream through an aligned buffer in aligned blocks, as
/// direct I/O requires.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include <spillway/core/error.hpp>
#include <spillway/memory/file_operations.hpp>

#include "memory/spill_checksum.hpp"

namespace spillway::memory::detail {

/// The most one read or write call moves: below Linux's per-call cap of
/// 0x7ffff000 bytes, a multiple of the alignment, and large enough that the
/// per-call cost is negligible against the transfer.
inline constexpr std::size_t max_io_bytes = std::size_t{64} << 20;

/// A read or write of a file opened with `O_DIRECT` was refused with
/// `EINVAL`: the file system wants another alignment than the tier's (larger
/// logical blocks, some FUSE or ZFS setups). The disk tier then falls back to
/// buffered I/O and tries again.
class DirectIoRefused : public IoError {
  public:
    using IoError::IoError;
};

/// An open spill file. Every failed call throws an error that names the path.
///
/// Thread safety: externally synchronised.
class OpenFile {
  public:
    /// Takes over `fd`, an open descriptor of `path`, opened with `O_DIRECT`
    /// if `direct`.
    OpenFile(FileOperations& operations, std::filesystem::path path, int fd, bool direct) noexcept
        : operations_(operations), path_(std::move(path)), fd_(fd), direct_(direct) {}
    /// Closes the file if `close` was not called; errors are logged, not thrown.
    ~OpenFile();
    OpenFile(OpenFile const&) = delete;
    OpenFile& operator=(OpenFile const&) = delete;

    /// Writes all of `data` at `offset`, continuing after short writes.
    /// @throws DirectIoRefused if the file was opened with `O_DIRECT` and a
    ///         write fails with `EINVAL`.
    /// @throws IoError naming the path if a write fails.
    void write_at(std::span<std::byte const> data, std::uint64_t offset);
    /// Reads into `data` from `offset` until it is full or the file ends;
    /// returns the bytes read.
    /// @throws DirectIoRefused as `write_at`.
    /// @throws IoError naming the path if a read fails.
    std::size_t read_at(std::span<std::byte> data, std::uint64_t offset);
    /// Closes the file.
    /// @throws IoError naming the path if closing reports an error (which can
    ///         be the first sign of a failed write).
    void close();

    [[nodiscard]] std::filesystem::path const& path() const noexcept { return path_; }

  private:
    FileOperations& operations_;
    std::filesystem::path path_;
    int fd_;  ///< -1 once closed
    bool const direct_;
};

/// Collects a stream of bytes in an aligned staging area and writes it to a
/// file in aligned blocks, checksumming what it writes.
///
/// Thread safety: externally synchronised.
class StagedWriter {
  public:
    /// Writes from the start of `file` through `staging` (aligned, a multiple
    /// of the alignment). Requires: both outlive the writer.
    StagedWriter(OpenFile& file, std::span<std::byte> staging) noexcept : file_(file), staging_(staging) {}
    /// Starts another payload in the same file: pads the stream with zeros
    /// to the alignment, restarts `stored_size` and `checksum`, and returns
    /// the offset in the file where the payload begins.
    std::uint64_t begin_payload() noexcept;
    /// Appends `bytes` to the stream.
    /// @throws IoError if writing out fails.
    void append(std::span<std::byte const> bytes);

    /// Room for at least `at_least` bytes after what is staged, writing out
    /// full blocks first if needed. Requires: `at_least` plus the alignment
    /// fits in the staging area.
    /// @throws IoError if writing out fails.
    std::span<std::byte> room(std::size_t at_least);
    /// Appends the first `bytes` of the last `room()` to the stream.
    void commit(std::size_t bytes) noexcept;
    /// Writes out what is staged, padded with zeros to the alignment.
    /// @throws IoError if writing fails.
    void finish();

    /// The path of the file written.
    [[nodiscard]] std::filesystem::path const& path() const noexcept { return file_.path(); }
    /// The bytes committed since the payload began.
    [[nodiscard]] std::uint64_t stored_size() const noexcept { return stored_size_; }
    /// The checksum of the bytes committed since the payload began.
    [[nodiscard]] std::uint64_t checksum() const noexcept { return checksum_.digest(); }

  private:
    /// Fills the staged partial block up with zeros.
    void pad_to_block() noexcept;
    /// Writes the staged full blocks and moves the partial one to the front.
    void write_full_blocks();

    OpenFile& file_;
    std::uint64_t offset_ = 0;         ///< where the first staged byte goes
    std::span<std::byte> staging_;
    std::size_t staged_ = 0;           ///< bytes in `staging_` not yet written
    std::uint64_t stored_size_ = 0;
    StreamingChecksum checksum_;
};

/// Reads a payload of known size from a file in aligned blocks through an
/// aligned staging area, checksumming what it reads.
///
/// Thread safety: externally synchronised.
class StagedReader {
  public:
    /// Reads `stored_size` bytes at `offset` (aligned) of `file` through
    /// `staging` (aligned, a multiple of the alignment). Requires: both
    /// outlive the reader.
    StagedReader(OpenFile& file, std::uint64_t offset, std::uint64_t stored_size, std::span<std::byte> staging) noexcept
        : file_(file), offset_(offset), remaining_(stored_size), staging_(staging) {}

    /// The next piece of the payload, valid until the next call; empty once
    /// the whole payload was returned.
    /// @throws IoError if a read fails.
    /// @throws CorruptData naming the path if the file ends early.
    std::span<std::byte const> next();

    /// The checksum of the bytes returned so far.
    [[nodiscard]] std::uint64_t checksum() const noexcept { return checksum_.digest(); }

  private:
    OpenFile& file_;
    std::uint64_t offset_;      ///< where the next block is read from
    std::uint64_t remaining_;   ///< payload bytes not yet returned
    std::span<std::byte> staging_;
    StreamingChecksum checksum_;
};

/// `strerror(error)` with the number, and a hint where the fix is a setting.
std::string describe_errno(int error);

/// Throws `CorruptData` naming `path`: the file holds fewer than `expected`
/// bytes at `offset`.
[[noreturn]] void throw_truncated(
    std::filesystem::path const& path, std::uint64_t expected, std::uint64_t offset, std::uint64_t found
);

}  // namespace spillway::memory::detail
