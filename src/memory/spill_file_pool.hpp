#pragma once
/// @file
/// The bookkeeping of a disk tier's spill files: which freed file a new spill
/// overwrites, and which freed files are removed.

#include <cstdint>
#include <filesystem>
#include <map>

#include <spillway/core/mutex.hpp>

namespace spillway::memory::detail {

/// One disk tier's spill files, in use and free, counted by their size on
/// disk (their capacity: the most ever written to them).
///
/// Creating a file, allocating its blocks and removing it again cost the file
/// system far more than overwriting blocks a file already has; on a file
/// system mounted with `discard`, each removal also has the disk trim the
/// freed blocks while it serves the spills and read-backs that follow. So a
/// file whose buffer is gone is kept, and the next buffer that fits is written
/// over it.
///
/// Bound: after every spill and every release, free files are removed,
/// smallest first (they fit the fewest buffers), until the files take no more
/// disk than the files in use took at their peak. Except while a file is being
/// written, a tier so holds no more disk than it once needed at one time; what
/// it holds goes with the tier.
///
/// A file is held as a node handle of the pool's map, so that giving it back
/// never allocates (it happens in destructors). The pool does no I/O: the disk
/// tier writes and removes the files it names.
///
/// Thread safety: safe to use concurrently.
class SpillFilePool {
  public:
    /// A spill file: its capacity in bytes (the key) and its path (the mapped value).
    using File = std::multimap<std::uint64_t, std::filesystem::path>::node_type;

    /// A file at `path` of capacity 0, not counted until `add_in_use`.
    static File new_file(std::filesystem::path path);

    /// Takes the smallest free file of at least `bytes`; empty if there is none.
    [[nodiscard]] File take(std::uint64_t bytes);

    /// Counts `file` (new, or taken) as in use with `written` bytes written
    /// from its start, growing its capacity to hold them.
    void add_in_use(File& file, std::uint64_t written);

    /// Returns `file`, in use, to the free files.
    void release(File file);

    /// Stops counting `file`, which is not in use (taken or new, never
    /// completely written) and is being removed.
    void forget(File const& file);

    /// A free file to remove, no longer counted, while the files take more
    /// than the files in use did at their peak; empty once they do not.
    [[nodiscard]] File take_excess();

    /// A free file to remove, no longer counted; empty if there is none.
    [[nodiscard]] File take_free();

  private:
    /// The smallest free file, no longer counted; empty if there is none.
    [[nodiscard]] File take_smallest_free() SPILLWAY_REQUIRES(mutex_);

    Mutex mutex_;
    /// The free files by capacity.
    std::multimap<std::uint64_t, std::filesystem::path> free_ SPILLWAY_GUARDED_BY(mutex_);
    std::uint64_t all_bytes_ SPILLWAY_GUARDED_BY(mutex_) = 0;     ///< capacity of every file counted
    std::uint64_t in_use_bytes_ SPILLWAY_GUARDED_BY(mutex_) = 0;  ///< capacity of the files in use
    std::uint64_t peak_in_use_bytes_ SPILLWAY_GUARDED_BY(mutex_) = 0;
};

}  // namespace spillway::memory::detail
