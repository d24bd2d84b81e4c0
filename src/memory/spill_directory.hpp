#pragma once
/// @file
/// The per-process directory that holds a buffer resource's spill files.

#include <filesystem>
#include <string_view>

#include <spillway/core/statistics.hpp>

namespace spillway::memory::detail {

/// A directory of its own for one buffer resource, named
/// `spillway-<pid>-<n>` under a root, with a file `owner` holding the pid.
/// The object holds an exclusive `flock` on the owner file for its whole
/// life; the kernel drops it when the process ends, however it ends.
///
/// Making one first removes the directories under the root whose owner file
/// is not locked: their owner is gone (a crash leaves them behind). The lock,
/// not the pid, decides, so a live directory of a process in another PID
/// namespace or on another host sharing the root (where the file system
/// supports `flock`) is kept, and a dead one whose pid was reused is removed.
/// The remover holds the lock while it removes, so several processes
/// starting at once remove each directory once.
///
/// A directory without an owner file is left alone while it is empty or
/// holds the file the owner file is made as: the owner file appears already
/// locked (made under another name, locked, then renamed), so such a
/// directory is being made. One named as this class names them, of a pid
/// that no process here has, that holds spill files and nothing else, is
/// what a removal cut short left (a process killed while it removed its
/// directory by other means than this class, which removes the owner file
/// last), and is removed, without a lock to take.
///
/// The directory is removed, with everything in it, when the object is
/// destroyed: the spill files first, then the owner file.
///
/// Thread safety: const member functions may be called concurrently.
class SpillDirectory {
  public:
    /// The name of the file holding the owner's pid and its lock.
    static constexpr char const* owner_file = "owner";
    /// The start of the name of a spill file in the directory; a number follows.
    static constexpr std::string_view spill_file_prefix = "buffer-";

    /// Creates `root` if needed, cleans it of dead processes' directories
    /// (counted in `memory.disk.stale_directories_removed`), and makes a new
    /// directory under it.
    /// @throws IoError naming the path if a directory or the owner file cannot
    ///         be created or locked.
    SpillDirectory(std::filesystem::path const& root, Statistics& statistics);
    /// Removes the directory and everything in it, then drops the lock;
    /// failures are logged.
    ~SpillDirectory();
    SpillDirectory(SpillDirectory const&) = delete;
    SpillDirectory& operator=(SpillDirectory const&) = delete;

    [[nodiscard]] std::filesystem::path const& path() const noexcept { return path_; }

  private:
    std::filesystem::path path_;
    int owner_fd_ = -1;  ///< the locked owner file, open for the object's life
};

}  // namespace spillway::memory::detail
