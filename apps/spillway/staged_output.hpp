#pragma once
/// @file
/// An output directory whose files appear all at once, when the job that
/// writes them succeeds, and not at all when it fails.

#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <spillway/core/file_descriptor.hpp>

#include "interruption.hpp"

namespace spillway::cli {

/// The output directory of a job, and a staging directory inside it where
/// the job writes its files: `<target>/.spillway-partial-<pid>`. `commit`
/// moves the files into the target (a rename each, on the same file system)
/// and removes the staging directory. Destroyed without `commit`, because the
/// job failed or the object that owns it threw while being made, it removes
/// the staging directory with everything in it, and the directories it made
/// for the target (if they are empty), so the target is left as it was. So
/// does SIGINT or SIGTERM before `commit` (`RemoveOnInterruption`); one that
/// arrives during `commit` is handled after it, and leaves the output in
/// place.
///
/// The target must be new or empty. The staging directory is locked
/// (`flock`) while this object has it; one in the target whose lock can be
/// taken was left by a run that no longer runs (one killed with SIGKILL,
/// say) and does not count: making a `StagedOutput` removes it. One that a
/// running job holds does count, whatever its pid, so two jobs never share
/// a target, not even from hosts or containers whose pids repeat.
///
/// Thread safety: externally synchronized.
class StagedOutput {
  public:
    /// The start of a staging directory's name; the owner's pid follows.
    static constexpr char const* staging_prefix = ".spillway-partial-";

    /// Makes `target` (and its missing parents) if it is missing, removes
    /// the staging directories that no run holds from it, checks that it is
    /// then empty, and makes this process's staging directory in it.
    /// @throws InvalidArgument naming `target` if it cannot be made, is not a
    ///         directory, is not empty, or the staging directory cannot be
    ///         made in it; nothing that it made is left then.
    explicit StagedOutput(std::filesystem::path target);
    /// Without a successful `commit`, removes the staging directory, any file
    /// a failed `commit` moved into the target, and the directories the
    /// constructor made if they are empty; errors are ignored.
    ~StagedOutput();
    StagedOutput(StagedOutput const&) = delete;
    StagedOutput& operator=(StagedOutput const&) = delete;

    /// The staging directory, where the job writes its files.
    [[nodiscard]] std::filesystem::path const& staging() const noexcept { return staging_; }
    /// The output directory.
    [[nodiscard]] std::filesystem::path const& target() const noexcept { return target_; }

    /// Moves every entry of the staging directory into the target, under the
    /// same name, and removes the staging directory (a failure to remove it
    /// is logged). The files must be closed. Afterwards the destructor
    /// removes nothing.
    /// Requires: `commit` has not succeeded before.
    /// @throws IoError naming the file if the staging directory cannot be
    ///         listed or an entry cannot be moved; the destructor then removes
    ///         what was moved.
    void commit();

  private:
    std::filesystem::path target_;
    std::filesystem::path staging_;
    /// The directories the constructor made, the target first and then its
    /// parents, up to one that existed.
    std::vector<std::filesystem::path> made_;
    /// The names of the entries `commit` has moved into the target.
    std::vector<std::filesystem::path> moved_;
    bool committed_ = false;
    /// Until `commit`: `made_`, outermost first, then the staging directory.
    std::deque<RemoveOnInterruption> removals_;
    FileDescriptor staging_lock_;  ///< the staging directory, locked; released after it is removed
};

/// A file that appears at its target only when the job that writes it
/// succeeds: the job writes `<directory>/.<name>.spillway-partial-<pid>-<n>`
/// beside the target, and `commit` renames it. Destroyed without `commit`,
/// or on SIGINT or SIGTERM before it, the partial file is removed, so a
/// failed run leaves no partial output; a file already at the target stays
/// as it was until `commit` replaces it. A target that is a symbolic link
/// stands for the file it ends at. The partial file is made at once and
/// holds an `flock` while this object has it; the partial files of the same
/// target named so (`<pid>` or `<pid>-<n>`, and nothing else, after the
/// prefix) whose lock can be taken, which processes that no longer run left
/// (killed with SIGKILL, say), are removed.
///
/// Thread safety: externally synchronized.
class StagedFile {
  public:
    /// Removes stale partial files of `target`, and makes and locks its
    /// own, registered for removal on interruption.
    /// @throws InvalidArgument if `target` is empty, `-`, a directory or
    ///         something else that is not a regular file (a device, a pipe),
    ///         its links loop, its directory does not exist, or the partial
    ///         file cannot be made there.
    /// @throws IoError if every name tried for the partial file is taken.
    explicit StagedFile(std::filesystem::path target);
    /// Without a successful `commit`, removes the partial file; errors are
    /// ignored.
    ~StagedFile();
    StagedFile(StagedFile const&) = delete;
    StagedFile& operator=(StagedFile const&) = delete;

    /// Where the job writes.
    [[nodiscard]] std::filesystem::path const& staging() const noexcept { return staging_; }

    /// Renames the partial file, which must be closed, to the target.
    /// Requires: `commit` has not succeeded before.
    /// @throws IoError naming both paths if the rename fails.
    void commit();

  private:
    std::filesystem::path target_;
    std::filesystem::path staging_;
    bool committed_ = false;
    std::optional<RemoveOnInterruption> removal_;  ///< of `staging_`, until `commit`
    FileDescriptor lock_;                          ///< the partial file, locked
};

}  // namespace spillway::cli
