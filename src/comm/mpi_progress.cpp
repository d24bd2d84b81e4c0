#include "comm/mpi_progress.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include <spillway/core/error.hpp>

#include "comm/mpi_support.hpp"

namespace spillway::comm::detail {

namespace {

/// The operations the progress thread is completing, with all their requests
/// in one array so that one `MPI_Testsome` tests them all. Owned by the
/// progress thread.
class ActiveOperations {
  public:
    /// What one call of `test` did.
    struct Round {
        bool progressed;       ///< some request completed
        std::size_t finished;  ///< operations finished (their `finish` was called)
    };

    [[nodiscard]] bool empty() const noexcept { return operations_.empty(); }

    void add(std::unique_ptr<MpiOperation> operation, std::vector<MPI_Request> const& requests) {
        for (auto const request : requests) {
            requests_.push_back(request);
            owner_.push_back(operations_.size());
        }
        operations_.push_back({std::move(operation), requests.size(), nullptr});
    }

    /// Tests every request once, and finishes the operations whose requests
    /// have all completed.
    Round test() {
        completed_.resize(requests_.size());
        statuses_.resize(requests_.size());
        int count = 0;
        auto const code = MPI_Testsome(
            static_cast<int>(requests_.size()), requests_.data(), &count, completed_.data(), statuses_.data()
        );
        if (code != MPI_SUCCESS && code != MPI_ERR_IN_STATUS) {
            SPILLWAY_FATAL("MPI_Testsome failed: " << mpi_error_string(code));
        }
        if (count == MPI_UNDEFINED || count == 0) {
            return {false, 0};
        }
        std::size_t finished = 0;
        for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i) {
            Active& active = operations_[owner_[static_cast<std::size_t>(completed_[i])]];
            if (code == MPI_ERR_IN_STATUS && statuses_[i].MPI_ERROR != MPI_SUCCESS && !active.error) {
                try {
                    check_mpi(statuses_[i].MPI_ERROR, "an MPI send or receive");
                } catch (...) {
                    active.error = std::current_exception();
                }
            }
            finished += --active.remaining == 0 ? 1 : 0;
        }
        if (finished > 0) {
            finish_completed();
        }
        return {true, finished};
    }

  private:
    struct Active {
        std::unique_ptr<MpiOperation> operation;
        std::size_t remaining;     ///< its requests not yet completed
        std::exception_ptr error;  ///< the first failure among them
    };

    /// Finishes the operations without remaining requests, and drops them
    /// and their (completed, null) requests from the arrays.
    void finish_completed() {
        std::vector<Active> still_active;
        std::vector<std::size_t> new_index(operations_.size());
        for (std::size_t i = 0; i < operations_.size(); ++i) {
            if (operations_[i].remaining == 0) {
                operations_[i].operation->finish(operations_[i].error);
            } else {
                new_index[i] = still_active.size();
                still_active.push_back(std::move(operations_[i]));
            }
        }
        std::size_t kept = 0;
        for (std::size_t i = 0; i < requests_.size(); ++i) {
            if (requests_[i] != MPI_REQUEST_NULL) {
                requests_[kept] = requests_[i];
                owner_[kept] = new_index[owner_[i]];
                ++kept;
            }
        }
        requests_.resize(kept);
        owner_.resize(kept);
        operations_ = std::move(still_active);
    }

    std::vector<Active> operations_;
    /// Every request of `operations_`; `requests_[i]` belongs to
    /// `operations_[owner_[i]]`. MPI_Testsome sets completed ones to
    /// MPI_REQUEST_NULL; they are dropped when an operation finishes.
    std::vector<MPI_Request> requests_;
    std::vector<std::size_t> owner_;
    // Scratch for MPI_Testsome.
    std::vector<int> completed_;
    std::vector<MPI_Status> statuses_;
};

}  // namespace

MpiProgress::MpiProgress() : thread_([this] { run(); }) {}

MpiProgress::~MpiProgress() {
    {
        MutexLock lock(mutex_);
        SPILLWAY_ASSERT(unfinished_ == 0, unfinished_ << " MPI operations are unfinished at shutdown");
        stopping_ = true;
    }
    work_cv_.notify_all();
    thread_.join();
}

void MpiProgress::submit(std::unique_ptr<MpiOperation> operation, std::vector<MPI_Request> requests) {
    SPILLWAY_ASSERT(!requests.empty(), "an MPI operation without requests was submitted");
    {
        MutexLock lock(mutex_);
        submitted_.push_back({std::move(operation), std::move(requests)});
        ++unfinished_;
    }
    work_cv_.notify_one();
}

std::size_t MpiProgress::drain(std::chrono::nanoseconds timeout) {
    MutexLock lock(mutex_);
    drained_cv_.wait_for(lock, timeout, [this]() SPILLWAY_REQUIRES(mutex_) { return unfinished_ == 0; });
    return unfinished_;
}

void MpiProgress::run() {
    ActiveOperations active;
    int idle_rounds = 0;  ///< consecutive rounds in which no request completed
    for (;;) {
        {
            MutexLock lock(mutex_);
            auto const has_work = [this]() SPILLWAY_REQUIRES(mutex_) {
                return !submitted_.empty() || stopping_;
            };
            if (active.empty()) {
                work_cv_.wait(lock, has_work);
            } else if (idle_rounds > spin_rounds) {
                auto const doublings = std::min(idle_rounds - spin_rounds, 16);
                work_cv_.wait_for(
                    lock, std::min(std::chrono::microseconds(std::int64_t{1} << doublings), max_sleep), has_work
                );
            }
            if (active.empty() && submitted_.empty()) {
                return;  // stopping, and nothing is left
            }
            if (!submitted_.empty()) {
                idle_rounds = 0;
            }
            for (auto& [operation, requests] : submitted_) {
                active.add(std::move(operation), requests);
            }
            submitted_.clear();
        }
        if (idle_rounds > 0 && idle_rounds <= spin_rounds) {
            std::this_thread::yield();
        }
        auto const round = active.test();
        idle_rounds = round.progressed ? 0 : idle_rounds + 1;
        if (round.finished > 0) {
            MutexLock lock(mutex_);
            unfinished_ -= round.finished;
            if (unfinished_ == 0) {
                drained_cv_.notify_all();
            }
        }
    }
}

}  // namespace spillway::comm::detail
