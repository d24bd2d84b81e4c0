#pragma once
/// @file
/// The file operations the disk tier performs, behind a small interface so
/// that tests can inject the failures a real disk produces.

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>

namespace spillway::memory {

/// The system calls the disk tier uses for spill files, with the same
/// arguments, results and `errno` as their POSIX namesakes. This class calls
/// them directly; it is what every `BufferResource` uses unless a test
/// configures a subclass that overrides some of them to fail the way a disk
/// can (ENOSPC, EIO, short writes, EINVAL for direct I/O). It is a seam for
/// fault injection, not a place for a second implementation of the product.
///
/// Thread safety: the disk tier calls these from many threads at once, on
/// different files; overrides must be safe to call concurrently.
class FileOperations {
  public:
    FileOperations() = default;
    virtual ~FileOperations() = default;
    FileOperations(FileOperations const&) = delete;
    FileOperations& operator=(FileOperations const&) = delete;

    /// open(2): a file descriptor, or -1 with `errno` set.
    virtual int open(char const* path, int flags, mode_t mode);
    /// pwrite(2): the bytes written (possibly fewer than `size`), or -1 with `errno`.
    virtual ssize_t pwrite(int fd, void const* data, std::size_t size, off_t offset);
    /// pread(2): the bytes read (0 at end of file), or -1 with `errno`.
    virtual ssize_t pread(int fd, void* data, std::size_t size, off_t offset);
    /// close(2): 0, or -1 with `errno`.
    virtual int close(int fd);
    /// unlink(2): 0, or -1 with `errno`.
    virtual int unlink(char const* path);
    /// statx(2) of the open file `fd` (`AT_EMPTY_PATH`) for `mask`: 0, or -1
    /// with `errno`.
    virtual int statx(int fd, unsigned int mask, struct statx* info);
};

}  // namespace spillway::memory
