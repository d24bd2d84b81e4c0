#pragma once
/// @file
/// Votes among the processes of an MPI job that end, rather than wait for
/// ever, when a process stops answering.

#include <mpi.h>

#include <chrono>
#include <stop_token>
#include <thread>
#include <vector>

#include <spillway/core/mutex.hpp>

namespace spillway::cli {

/// The processes of `MPI_COMM_WORLD` voting whether every one of them got
/// through a point of the job (its start, its end), while each tells the
/// others it is alive. From construction to destruction a thread of its own
/// sends every other process a heartbeat a quarter of `timeout` apart and
/// receives theirs, on a communicator of its own. `all` waits for every
/// process's vote for as long as the processes still to vote keep sending
/// heartbeats, however long they take to get there (verifying their share
/// of the output, say), and fails naming one that has sent nothing for
/// `timeout`: stopped (SIGSTOP, a debugger) or unreachable. Time in which
/// this process itself did not run counts for no peer.
///
/// Thread safety: `all` is a collective that every process calls the same
/// number of times, from one thread.
/// Lifetime: made after MPI is initialised with `MPI_THREAD_MULTIPLE`, and
/// destroyed before it is finalised.
class MpiAgreement {
  public:
    /// Starts the heartbeats (none where this process is the only one).
    /// @throws IoError if the communicator cannot be made.
    explicit MpiAgreement(std::chrono::nanoseconds timeout);
    /// Stops the heartbeats.
    ~MpiAgreement();
    MpiAgreement(MpiAgreement const&) = delete;
    MpiAgreement& operator=(MpiAgreement const&) = delete;

    /// Whether every process voted `ok`: waits for every process's vote.
    /// @throws PeerTimeout naming a process that has not voted and has sent
    ///         no heartbeat for the timeout (this vote is then abandoned, and
    ///         the job must end: `MPI_Abort`).
    /// @throws IoError if an MPI call fails.
    [[nodiscard]] bool all(bool ok);

  private:
    /// The heartbeat thread: sends and receives heartbeats until `stop`.
    void exchange_heartbeats(std::stop_token const& stop);

    MPI_Comm communicator_ = MPI_COMM_NULL;
    int rank_ = 0;
    int size_ = 1;
    std::chrono::nanoseconds timeout_;
    int votes_ = 0;      ///< the votes so far; each has a tag of its own
    int sent_vote_ = 0;  ///< what this process sent in the last vote (1: ok)
    Mutex mutex_;
    /// When each process's last heartbeat (or this object's construction) was seen.
    std::vector<std::chrono::steady_clock::time_point> last_heard_ SPILLWAY_GUARDED_BY(mutex_);
    std::jthread heartbeats_;  ///< last: stopped and joined before the rest goes
};

}  // namespace spillway::cli
