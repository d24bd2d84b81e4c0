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
#include <vector>

#include <spillway/core/statistics.hpp>
#include <spillway/memory/codec.hpp>
#include <spillway/memory/file_operations.hpp>
#include <spillway/memory/memory_config.hpp>

#include "memory/aligned_allocation.hpp"
#include "memory/spill_checksum.hpp"
#include "memory/spill_directory.hpp"
#include "memory/spill_file_pool.hpp"
#include "memory/spill_io.hpp"

namespace spillway::memory::detail {

class DiskTier;

/// What the tier keeps in memory about a buffer it wrote, to read it back and
/// check it: the file itself holds only the payload (docs/spill_format.md).
struct SpillRecord {
    Codec codec = Codec::none;
    std::uint64_t size = 0;              ///< the buffer's bytes, uncompressed
    std::uint64_t stored_size = 0;       ///< the payload's bytes as stored (after the codec)
    std::uint64_t payload_checksum = 0;  ///< XXH3-64 of the stored payload
};

/// A spill file, shared by the DISK buffers written into it together. Gives
/// the file back to its tier when the last of them is gone: kept for reuse
/// once completely written, removed if writing it failed.
///
/// Thread safety: const member functions may be called concurrently.
class SpillFile {
  public:
    /// Holds `file` of `tier`'s directory (which may not exist yet), or, while
    /// the tier claims one, nothing. Requires: `tier` outlives the object.
    SpillFile(DiskTier& tier, SpillFilePool::File file) noexcept : tier_(tier), file_(std::move(file)) {}
    ~SpillFile();
    SpillFile(SpillFile const&) = delete;
    SpillFile& operator=(SpillFile const&) = delete;

    [[nodiscard]] std::filesystem::path const& path() const noexcept { return file_.mapped(); }

  private:
    friend class DiskTier;
    DiskTier& tier_;
    SpillFilePool::File file_;
    bool written_ = false;  ///< whether the file is completely written
};

/// Where one DISK buffer lies: its spill file (shared with the buffers
/// written together with it), the offset of its payload there, and its
/// record.
///
/// Thread safety: immutable.
class SpillSlot {
  public:
    SpillSlot(std::shared_ptr<SpillFile const> file, std::uint64_t offset, SpillRecord const& record) noexcept
        : file_(std::move(file)), offset_(offset), record_(record) {}

    [[nodiscard]] std::filesystem::path const& path() const noexcept { return file_->path(); }
    /// The spill file; the same object for every slot of the file.
    [[nodiscard]] SpillFile const& file() const noexcept { return *file_; }
    /// Where the payload begins in the file; a multiple of the alignment.
    [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }
    /// Where the payload's last block ends: where the next payload written
    /// together with it begins.
    [[nodiscard]] std::uint64_t end() const noexcept { return offset_ + align_up(record_.stored_size); }
    [[nodiscard]] SpillRecord const& record() const noexcept { return record_; }

  private:
    std::shared_ptr<SpillFile const> file_;
    std::uint64_t offset_;
    SpillRecord record_;
};

/// Writes HOST bytes to spill files and reads them back.
///
/// docs/spill_format.md describes a spill file. A buffer, or buffers written
/// together, go over a freed file that holds them where there is one
/// (`SpillFilePool` says why and how much disk that keeps), else into a new
/// file. A file is written with direct I/O (`O_DIRECT`) unless
/// `MemoryConfig::direct_io` is off. When statx (`STATX_DIOALIGN`) of the
/// first file says the file system wants a larger alignment than 4 KiB, or no
/// direct I/O at all, or when the file system refuses it (`EINVAL`, at `open`
/// or at a read or write), the tier falls back to buffered I/O for the rest of
/// its life, logs it once, counts `memory.disk.direct_io_fallbacks` and does
/// the refused open, write or read again.
///
/// Statistics: `memory.disk.write.bytes` and `memory.disk.read.bytes`, the
/// bytes of spill files written and read (padding included);
/// `memory.disk.read.requests`, the read requests made;
/// `memory.disk.files_created`, `memory.disk.files_reused` and
/// `memory.disk.files_removed`, the files made, written over, and removed
/// while the tier lives to keep within the pool's bound.
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

    /// Removes every free spill file, which the tier otherwise keeps for
    /// later buffers; those then get new files.
    void remove_free_files() noexcept;

    /// Writes the first `size` bytes of `padded` to a spill file of its own
    /// with the configured codec. Requires: `padded` is aligned and holds
    /// `align_up(size)` bytes, zero after `size`.
    /// @throws IoError naming the file if it cannot be written; the file is removed.
    std::unique_ptr<SpillSlot> write(std::span<std::byte const> padded, std::size_t size);

    /// Writes `payloads` (any alignment) one after another, each at an
    /// aligned offset, into one spill file with the configured codec, through
    /// a staging area: many small buffers cost one file and few large
    /// requests. Returns their slots, in order; the file lives until the last
    /// of them is destroyed. Requires: `payloads` is not empty.
    /// @throws IoError naming the file if it cannot be written; the file is removed.
    std::vector<std::unique_ptr<SpillSlot>> write_together(std::span<std::span<std::byte const> const> payloads);

    /// Reads the payload of `slot` back into the first `slot.record().size`
    /// bytes of `padded`. Requires: `padded` is aligned and holds `align_up`
    /// of that.
    /// @throws IoError naming the file if it is missing or cannot be read.
    /// @throws CorruptData naming the file if it is truncated or fails a check.
    void read(SpillSlot const& slot, std::span<std::byte> padded);

    /// Reads the payloads of `slots` back into `destinations`, one each of
    /// exactly its slot's `record().size` bytes, at any alignment. Each file
    /// is opened once, and payloads without a codec that lie next to each
    /// other in it (as `write_together` leaves them), or a few KiB apart, are
    /// read with one request per staging area's worth, the bytes between them
    /// included: many small buffers spilled together come back in a few
    /// large reads instead of one each. Requires: the spans have the same
    /// size.
    /// @throws IoError / CorruptData as `read`; destinations already filled
    ///         keep what was read into them.
    void read_together(std::span<SpillSlot const* const> slots, std::span<std::span<std::byte> const> destinations);

  private:
    friend class SpillFile;

    /// `write` without a codec, and `write_together`, without the fallback.
    std::unique_ptr<SpillSlot> write_unstaged(std::span<std::byte const> padded, std::size_t size);
    std::vector<std::unique_ptr<SpillSlot>> write_staged(std::span<std::span<std::byte const> const> payloads);
    /// `read` and `read_together` without the fallback.
    void read_once(SpillSlot const& slot, std::span<std::byte> padded);
    void read_together_once(std::span<SpillSlot const* const> slots,
                            std::span<std::span<std::byte> const> destinations);
    /// Reads the payloads of `run`, slots of the open file `in` without a
    /// codec that lie next to each other in offset order, into their
    /// `destinations`, through `staging`.
    void read_run(OpenFile& in, std::span<SpillSlot const* const> run,
                  std::span<std::span<std::byte> const> destinations, std::span<std::byte> staging);
    /// Reads the payload of `slot`, of the open file `in`, stored with a
    /// codec, into `destination` (its size) through `staging`.
    void read_decoded(OpenFile& in, SpillSlot const& slot, std::span<std::byte> destination,
                      std::span<std::byte> staging);
    /// Checks the checksum of what was read for `slot` and counts its bytes.
    /// @throws CorruptData naming the file if it does not match.
    void check_read(SpillSlot const& slot, std::uint64_t actual_checksum);
    /// Runs `attempt` and, if a read or write refuses direct I/O, turns
    /// direct I/O off for good and runs it once more.
    template <typename Attempt>
    auto with_direct_io_fallback(Attempt attempt) -> decltype(attempt()) {
        try {
            return attempt();
        } catch (DirectIoRefused const&) {
            stop_direct_io();
            return attempt();
        }
    }
    /// Turns direct I/O off for the rest of the tier's life; the first call
    /// logs it and counts `memory.disk.direct_io_fallbacks`.
    void stop_direct_io();
    /// A freed file that holds `bytes`, else a new one.
    std::shared_ptr<SpillFile> claim_file(std::uint64_t bytes);
    /// Counts `file` as completely written, `end` bytes from its start.
    void finish_writing(SpillFile& file, std::uint64_t end);
    /// Takes back the file of a destroyed `SpillFile`, removing what the pool
    /// does not keep.
    void give_back(SpillFile& file) noexcept;
    /// Removes the free files the pool no longer keeps.
    void trim() noexcept;
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
    /// Whether the file system's direct I/O alignment was checked (statx),
    /// which happens on the first file opened with `O_DIRECT`.
    std::atomic<bool> alignment_checked_{false};
    /// The number in the next spill file's name. Atomic for concurrent writers.
    std::atomic<std::uint64_t> next_file_{0};
    SpillFilePool files_;
};

}  // namespace spillway::memory::detail
