#pragma once
/// @file
/// The MPI backend's progress thread: it completes posted sends and receives
/// whether or not anyone looks at their futures.

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include <spillway/core/mutex.hpp>

namespace spillway::comm::detail {

/// A posted MPI operation: it owns the memory its requests read or write
/// until `finish` is called.
class MpiOperation {
  public:
    virtual ~MpiOperation() = default;

    /// Called once on the progress thread when every request of the
    /// operation has completed; `error` is null, or the first failure. Runs
    /// without any lock of `MpiProgress` held, and must not submit.
    virtual void finish(std::exception_ptr error) noexcept = 0;
};

/// Completes posted operations on a thread of its own.
///
/// The thread tests every active request with one `MPI_Testsome` per round,
/// which also drives MPI's progress engine (a rendezvous send only advances
/// while its process calls MPI). When no operation is active it sleeps until
/// one is submitted; while operations are active and none completes it backs
/// off: it yields for `spin_rounds` rounds, then sleeps for doubling times up
/// to `max_sleep`, and a submission wakes it.
///
/// Thread safety: `submit` and `drain` may be called concurrently. The lock
/// `mutex_` is a leaf: it is never held while MPI is called or an operation
/// finishes.
class MpiProgress {
  public:
    /// Yield-only rounds before sleeping: short enough that an idle rank soon
    /// stops taking a core from its neighbours, long enough to cover the gap
    /// between two fragments of a transfer.
    static constexpr int spin_rounds = 64;
    /// The longest sleep between rounds: bounds the latency an operation
    /// completing during a sleep sees.
    static constexpr std::chrono::microseconds max_sleep{256};

    /// Starts the thread.
    MpiProgress();
    /// Stops the thread. Requires: `drain` returned 0; aborts otherwise.
    ~MpiProgress();
    MpiProgress(MpiProgress const&) = delete;
    MpiProgress& operator=(MpiProgress const&) = delete;

    /// Hands over `operation` and its posted `requests`; the thread calls
    /// `operation->finish` once they have all completed.
    /// Requires: `requests` is not empty.
    void submit(std::unique_ptr<MpiOperation> operation, std::vector<MPI_Request> requests);

    /// Blocks until every submitted operation has finished, or `timeout`
    /// passed. Returns how many are still unfinished.
    std::size_t drain(std::chrono::nanoseconds timeout);

  private:
    struct Submitted {
        std::unique_ptr<MpiOperation> operation;
        std::vector<MPI_Request> requests;
    };

    /// The thread's loop.
    void run();

    Mutex mutex_;
    /// Signalled by `submit` and the destructor.
    CondVar work_cv_;
    /// Signalled when `unfinished_` drops to 0.
    CondVar drained_cv_;
    /// Operations submitted and not yet taken by the thread.
    std::vector<Submitted> submitted_ SPILLWAY_GUARDED_BY(mutex_);
    /// Operations submitted and not yet finished.
    std::size_t unfinished_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    bool stopping_ SPILLWAY_GUARDED_BY(mutex_) = false;

    std::thread thread_;  ///< started last, joined first
};

}  // namespace spillway::comm::detail
