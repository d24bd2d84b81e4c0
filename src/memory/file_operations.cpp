#include <spillway/memory/file_operations.hpp>

#include <fcntl.h>
#include <unistd.h>

namespace spillway::memory {

int FileOperations::open(char const* path, int flags, mode_t mode) {
    return ::open(path, flags, mode);  // NOLINT(cppcoreguidelines-pro-type-vararg)
}

ssize_t FileOperations::pwrite(int fd, void const* data, std::size_t size, off_t offset) {
    return ::pwrite(fd, data, size, offset);
}

ssize_t FileOperations::pread(int fd, void* data, std::size_t size, off_t offset) {
    return ::pread(fd, data, size, offset);
}

int FileOperations::close(int fd) {
    return ::close(fd);
}

int FileOperations::unlink(char const* path) {
    return ::unlink(path);
}

int FileOperations::statx(int fd, unsigned int mask, struct statx* info) {
    return ::statx(fd, "", AT_EMPTY_PATH, mask, info);
}

}  // namespace spillway::memory
