#pragma once
/// @file
/// The DISK tier: spill files in a per-process directory, written and read
/// with direct I/O where the file system allows it, each one checksummed.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

#include <spillway/core/statistics.hpp>
#include <spillway/memory/file_operations.hpp>
#include <spillway/memory/memory_config.hpp>

#include "memory/spill_directory.hpp"
#include "memory/spill_frame.hpp"
#include "memory/spill_io.hpp"

namespace spillway::memory::detail {

class DiskTier;

/// The spill file of one DISK buffer, and what its header must say. Removes
/// the file when destroyed.
///
/// Thread safety: const member functions may be called concurrently.
class SpillFile {
  public:
    /// The file at `path` in `tier`'s directory (which may not exist yet).
    /// Requires: `tier` outlives the object.
    SpillFile(DiskTier& tier, std::filesystem::path path) noexcept
        : tier_(tier), path_(std::move(path)) {}
    ~SpillFile();
    SpillFile(SpillFile const&) = delete;
    SpillFile& operator=(SpillFile const&) = delete;

    [[nodiscard]] std::filesystem::path const& path() const noexcept { return path_; }
    [[nodiscard]] FrameHeader const& header() const noexcept { return header_; }

  private:
    friend class DiskTier;
    DiskTier& tier_;
    std::filesystem::path path_;
    FrameHeader header_;  ///< set once the file is completely written
};

/// Writes HOST bytes to spill files and reads them back.
///
/// docs/spill_format.md describes a spill file. A file is written with direct
/// I/O (`O_DIRECT`) unless `MemoryConfig::direct_io` is off; when the file
/// system refuses it (`EINVAL`), the tier falls back to buffered I/O for the
/// rest of its life, logs it once and counts `memory.disk.direct_io_fallbacks`.
///
/// Statistics: `memory.disk.write.bytes` and `memory.disk.read.bytes`, the
/// bytes of spill files written and read (header block and padding included).
///
/// Thread safety: safe to use concurrently, on different files.
class DiskTier {
  public:
    /// A tier whose directory is made under `config.spill_directory`.
    /// Requires: `statistics` outlives the tier.
    /// @throws IoError if the directory cannot be made.
    DiskTier(MemoryConfig const& config, Statistics& statistics);

    /// The directory holding this tier's spill files.
    [[nodiscard]] std::filesystem::path const& directory() const noexcept {
        return directory_.path();
    }

    /// Writes the first `size` bytes of `padded` to a new spill file with the
    /// configured codec. Requires: `padded` is aligned and holds
    /// `align_up(size)` bytes, zero after `size`.
    /// @throws IoError naming the file if it cannot be written; no file is left.
    std::unique_ptr<SpillFile> write(std::span<std::byte const> padded, std::size_t size);

    /// Reads `file` back into the first `file.header().size` bytes of
    /// `padded`. Requires: `padded` is aligned and holds `align_up` of that.
    /// @throws IoError naming the file if it is missing or cannot be read.
    /// @throws CorruptData naming the file if it is truncated or fails a check.
    void read(SpillFile const& file, std::span<std::byte> padded);

  private:
    friend class SpillFile;

    /// Opens `path` with `flags`, adding `O_DIRECT` while direct I/O is on.
    /// @throws IoError naming the path.
    OpenFile open(std::filesystem::path const& path, int flags);
    /// Removes the file at `path`; failures other than "already gone" are logged.
    void remove(std::filesystem::path const& path) noexcept;

    // Constant after construction.
    Statistics& statistics_;
    std::shared_ptr<FileOperations> const operations_;
    Codec const codec_;
    SpillDirectory const directory_;

    /// Whether files are opened with O_DIRECT; cleared once, when the file
    /// system refuses it. Atomic because every spilling thread reads it.
    std::atomic<bool> direct_io_;
    /// The number in the next spill file's name. Atomic for concurrent writers.
    std::atomic<std::uint64_t> next_file_{0};
};

}  // namespace spillway::memory::detail
