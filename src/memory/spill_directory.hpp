#pragma once
/// @file
/// The per-process directory that holds a buffer resource's spill files.

#include <filesystem>

#include <spillway/core/statistics.hpp>

namespace spillway::memory::detail {

/// A directory of its own for one buffer resource, named
/// `spillway-<pid>-<n>` under a root, with a file `owner` holding the pid.
///
/// Making one first removes the directories under the root whose owner
/// process no longer runs (a crash leaves them behind). A directory without
/// an owner file, or whose pid is alive, is left alone: it may be another
/// process's, being made. The directory is removed, with everything in it,
/// when the object is destroyed.
///
/// Thread safety: const member functions may be called concurrently.
class SpillDirectory {
  public:
    /// The name of the file holding the owner's pid.
    static constexpr char const* owner_file = "owner";

    /// Creates `root` if needed, cleans it of dead processes' directories
    /// (counted in `memory.disk.stale_directories_removed`), and makes a new
    /// directory under it.
    /// @throws IoError naming the path if a directory or the owner file cannot
    ///         be created.
    SpillDirectory(std::filesystem::path const& root, Statistics& statistics);
    /// Removes the directory and everything in it; failures are logged.
    ~SpillDirectory();
    SpillDirectory(SpillDirectory const&) = delete;
    SpillDirectory& operator=(SpillDirectory const&) = delete;

    [[nodiscard]] std::filesystem::path const& path() const noexcept { return path_; }

  private:
    std::filesystem::path path_;
};

}  // namespace spillway::memory::detail
