#pragma once
/// @file
/// A file layer for the disk tier that fails the way a real disk can, on
/// request: errors from writes and reads, short writes, a file system that
/// refuses direct I/O, and hooks that run before every write and every read.

#include <fcntl.h>

#include <cerrno>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include <spillway/core/mutex.hpp>
#include <spillway/memory/file_operations.hpp>

namespace spillway::test {

/// Real system calls, with faults injected as configured.
///
/// Thread safety: safe to use concurrently.
class FaultInjectingFileOperations : public memory::FileOperations {
  public:
    /// The next `count` writes fail with `error` (such as ENOSPC or EIO).
    void fail_writes(int error, int count = 1) {
        MutexLock lock(mutex_);
        write_error_ = error;
        failing_writes_ = count;
    }
    /// The next `count` reads fail with `error`.
    void fail_reads(int error, int count = 1) {
        MutexLock lock(mutex_);
        read_error_ = error;
        failing_reads_ = count;
    }
    /// Whether every write of more than one block writes only one block.
    void short_writes(bool enabled) {
        MutexLock lock(mutex_);
        short_writes_ = enabled;
    }
    /// Whether opening with O_DIRECT fails with EINVAL, as on file systems
    /// without direct I/O.
    void refuse_direct_io(bool enabled) {
        MutexLock lock(mutex_);
        refuse_direct_io_ = enabled;
    }
    /// Runs `hook` (without any lock held) before every write; it may block.
    void before_write(std::function<void()> hook) {
        MutexLock lock(mutex_);
        before_write_ = std::move(hook);
    }
    /// Runs `hook` (without any lock held) before every read; it may block.
    void before_read(std::function<void()> hook) {
        MutexLock lock(mutex_);
        before_read_ = std::move(hook);
    }
    /// Makes `statx` report that direct I/O needs file offsets aligned to
    /// `offset` bytes and memory to `memory` (0 for `offset`: the file system
    /// does not do direct I/O), as `STATX_DIOALIGN` does.
    void report_direct_io_alignment(std::uint32_t offset, std::uint32_t memory) {
        MutexLock lock(mutex_);
        direct_io_alignment_ = {offset, memory};
    }

    /// How many files were opened with O_DIRECT.
    int direct_opens() {
        MutexLock lock(mutex_);
        return direct_opens_;
    }

    int open(char const* path, int flags, mode_t mode) override {
        {
            MutexLock lock(mutex_);
            if ((flags & O_DIRECT) != 0) {
                if (refuse_direct_io_) {
                    errno = EINVAL;
                    return -1;
                }
                ++direct_opens_;
            }
        }
        return FileOperations::open(path, flags, mode);
    }

    ssize_t pwrite(int fd, void const* data, std::size_t size, off_t offset) override {
        std::function<void()> hook;
        {
            MutexLock lock(mutex_);
            hook = before_write_;
            if (failing_writes_ > 0) {
                --failing_writes_;
                errno = write_error_;
                return -1;
            }
            if (short_writes_ && size > block) {
                size = block;
            }
        }
        if (hook) {
            hook();
        }
        return FileOperations::pwrite(fd, data, size, offset);
    }

    ssize_t pread(int fd, void* data, std::size_t size, off_t offset) override {
        std::function<void()> hook;
        {
            MutexLock lock(mutex_);
            hook = before_read_;
            if (failing_reads_ > 0) {
                --failing_reads_;
                errno = read_error_;
                return -1;
            }
        }
        if (hook) {
            hook();
        }
        return FileOperations::pread(fd, data, size, offset);
    }

    int statx(int fd, unsigned int mask, struct statx* info) override {
        int const result = FileOperations::statx(fd, mask, info);
        MutexLock lock(mutex_);
        if (result == 0 && direct_io_alignment_) {
            info->stx_mask |= STATX_DIOALIGN;
            info->stx_dio_offset_align = direct_io_alignment_->first;
            info->stx_dio_mem_align = direct_io_alignment_->second;
        }
        return result;
    }

  private:
    static constexpr std::size_t block = 4096;

    Mutex mutex_;
    int write_error_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    int failing_writes_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    int read_error_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    int failing_reads_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    bool short_writes_ SPILLWAY_GUARDED_BY(mutex_) = false;
    bool refuse_direct_io_ SPILLWAY_GUARDED_BY(mutex_) = false;
    int direct_opens_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    std::optional<std::pair<std::uint32_t, std::uint32_t>> direct_io_alignment_ SPILLWAY_GUARDED_BY(mutex_);
    std::function<void()> before_write_ SPILLWAY_GUARDED_BY(mutex_);
    std::function<void()> before_read_ SPILLWAY_GUARDED_BY(mutex_);
};

}  // namespace spillway::test
