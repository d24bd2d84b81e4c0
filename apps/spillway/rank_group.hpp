#pragma once
/// @file
/// The ranks of a job that this process runs, with their buffer resources
/// and communicators.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include <spillway/comm/communicator.hpp>
#include <spillway/comm/mpi_config.hpp>
#include <spillway/core/mutex.hpp>
#include <spillway/core/options.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/memory_config.hpp>

#include "interruption.hpp"
#include "progress.hpp"
#include "run_summary.hpp"

namespace spillway::cli {

/// What one rank's buffer resource spilled, read back and sent, and the peak
/// of each of its tiers: the figures every job on ranks reports alike.
/// Trivially copyable, so that the ranks can gather it (`gather_values`).
struct RankMemoryFigures {
    std::uint64_t spilled_bytes = 0;
    std::uint64_t read_back_bytes = 0;
    std::uint64_t sent_bytes = 0;  ///< of chunks sent to other ranks, by shuffles and all-gathers
    std::uint64_t peak_host = 0;
    std::uint64_t peak_disk = 0;

    /// The figures of `resource` now.
    [[nodiscard]] static RankMemoryFigures of(memory::BufferResource const& resource);
};

/// The ranks of a job in this process: with option `comm` = `local`, `ranks`
/// in-process ranks connected by `comm::LocalCommunicator`, each a thread
/// with a buffer resource of its own; with `comm` = `mpi`, this process's one
/// rank of the MPI job (MPI must be initialised, see `Processes`).
///
/// The HOST limit of the configuration is this process's: in-process ranks
/// share it equally. Every other setting applies to each resource.
///
/// Thread safety: externally synchronized; `run` calls its body concurrently.
class RankGroup {
  public:
    /// Makes the buffer resources (each makes its spill directory, which
    /// SIGINT and SIGTERM remove: `RemoveOnInterruption`).
    /// `default_ranks` applies when option `ranks` is not set.
    /// @throws InvalidArgument if option `ranks` or `comm` is malformed, or
    ///         `ranks` differs from the number of MPI processes.
    /// @throws IoError naming the directory if a spill directory cannot be made.
    RankGroup(Options const& options, memory::MemoryConfig config, int default_ranks);

    /// The ranks a group made from `options` runs in this process: one over
    /// MPI, else option `ranks` (`default_ranks` when it is not set).
    /// @throws InvalidArgument if option `ranks` or `comm` is malformed.
    [[nodiscard]] static std::size_t in_process_ranks(Options const& options, int default_ranks);

    /// The ranks of the job, in every process.
    [[nodiscard]] comm::Rank size() const noexcept { return size_; }
    /// Whether the ranks are MPI processes.
    [[nodiscard]] bool uses_mpi() const noexcept { return uses_mpi_; }
    /// The resources of this process's ranks, by local index (rank minus
    /// `first_rank()`).
    [[nodiscard]] std::vector<std::unique_ptr<memory::BufferResource>> const& resources() const noexcept {
        return resources_;
    }
    /// The rank of this process's first rank.
    [[nodiscard]] comm::Rank first_rank() const noexcept { return first_rank_; }
    /// The HOST limit of each rank's resource.
    [[nodiscard]] std::uint64_t host_limit_per_rank() const;

    /// Sets `summary`'s spilled, read-back and sent bytes to their sums over
    /// `ranks` (every rank's figures, in rank order), and its peak memory to
    /// each rank's peaks under the limits of this group's resources.
    /// Requires: `release_resources` has not run.
    void report_memory(RunSummary& summary, std::span<RankMemoryFigures const> ranks) const;

    /// Connects this process's ranks (over MPI: a collective with the other
    /// processes) and runs `body(communicator)` for each of them, each on a
    /// thread of its own, and returns once all have returned.
    /// @throws the cause of a failure: the error `note_failure` recorded
    ///         unless it is `Error::relayed_from_peer` and a body threw one
    ///         that is not, else the first exception a body threw that is
    ///         not relayed, else the first (others, such as the errors a
    ///         failed rank causes in the collectives of the rest, are dropped).
    void run(std::function<void(comm::Communicator&)> const& body);

    /// Records `error`, which a rank's body is about to throw, while the
    /// body's collectives still exist: once they are destroyed they tell the
    /// other ranks that this one gave up, and those fail too, perhaps before
    /// this rank's error has left its body. `run` then throws the error
    /// recorded first, the cause, not its echo in another rank; a relayed
    /// error recorded first gives way to one that is not.
    /// Thread safety: may be called concurrently.
    void note_failure(std::exception_ptr error);

    /// Ends a job on these ranks that began at `started`: destroys the buffer
    /// resources, each on a thread of its own, removing their spill
    /// directories (with many spill files that takes a while, shown as
    /// `progress`'s phase "clean up", an item a rank), then completes
    /// `summary`: `seconds` since `started`, the phase "clean up" (from
    /// `cleaning`, where the job's other phases ended) after those in
    /// `phases`, and `peak_resident_bytes`. Afterwards `resources()` is
    /// empty and `host_limit_per_rank` must not be called.
    /// Requires: `run` has returned.
    void finish(RunSummary& summary, Progress& progress, std::chrono::steady_clock::time_point started,
                std::chrono::steady_clock::time_point cleaning = std::chrono::steady_clock::now());

  private:
    bool uses_mpi_ = false;
    comm::MpiConfig mpi_config_;  ///< read (and checked) only over MPI
    comm::Rank size_ = 1;
    comm::Rank first_rank_ = 0;
    /// The spill directories of `resources_`, by local index, until
    /// `release_resources` has removed them; declared first, so that they
    /// stay registered while the destructor removes them.
    std::deque<RemoveOnInterruption> spill_removals_;
    std::vector<std::unique_ptr<memory::BufferResource>> resources_;
    Mutex failure_mutex_;
    std::exception_ptr noted_failure_ SPILLWAY_GUARDED_BY(failure_mutex_);  ///< the first `note_failure`
};

}  // namespace spillway::cli
