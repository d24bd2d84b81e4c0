#pragma once
/// @file
/// An open file descriptor that closes itself.

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <utility>

namespace spillway {

/// Owns a POSIX file descriptor (or none, -1) and closes it when destroyed,
/// so that a constructor that throws after opening a file does not leak it.
/// Movable, not copyable.
///
/// Thread safety: externally synchronized.
class FileDescriptor {
  public:
    /// Owns `fd`, which may be -1 (none), as `open` returns on failure.
    explicit FileDescriptor(int fd = -1) noexcept : fd_(fd) {}
    ~FileDescriptor() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
    FileDescriptor& operator=(FileDescriptor&& other) noexcept {
        FileDescriptor(std::move(other)).swap(*this);
        return *this;
    }
    FileDescriptor(FileDescriptor const&) = delete;
    FileDescriptor& operator=(FileDescriptor const&) = delete;

    /// The descriptor, or -1.
    [[nodiscard]] int get() const noexcept { return fd_; }
    /// Whether it holds a descriptor.
    [[nodiscard]] explicit operator bool() const noexcept { return fd_ >= 0; }
    /// Gives up ownership: returns the descriptor, which the caller closes,
    /// and holds none.
    [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }

    /// Exchanges the descriptors the two hold.
    void swap(FileDescriptor& other) noexcept { std::swap(fd_, other.fd_); }

    /// Whether the file it holds is the one at `path` now (the same device
    /// and inode): false if it holds none, or `path` names another file or
    /// none, as after the file was unlinked or replaced. A lock taken on a
    /// file that its remover unlinked first proves nothing; this tells.
    [[nodiscard]] bool is_at(std::filesystem::path const& path) const noexcept {
        struct stat opened {};
        struct stat current {};
        return fd_ >= 0 && ::fstat(fd_, &opened) == 0 && ::stat(path.c_str(), &current) == 0
               && opened.st_dev == current.st_dev && opened.st_ino == current.st_ino;
    }

  private:
    int fd_;
};

}  // namespace spillway
