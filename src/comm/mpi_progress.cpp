#include "comm/mpi_progress.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include <spillway/core/error.hpp>

#include "comm/mpi_support.hpp"

namespace spillway::comm::detail {

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
    /// An operation the thread is completing.
    struct Active {
        std::unique_ptr<MpiOperation> operation;
        std::size_t remaining;  ///< its requests not yet completed
        std::exception_ptr error;
    };
    // Owned by this thread. `requests[i]` belongs to `active[owner[i]]`;
    // MPI_Testsome sets a completed request to MPI_REQUEST_NULL.
    std::vector<Active> active;
    std::vector<MPI_Request> requests;
    std::vector<std::size_t> owner;
    std::vector<int> completed;
    std::vector<MPI_Status> statuses;
    int idle_rounds = 0;

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
                    lock, std::min(std::chrono::microseconds(std::int64_t{1} << doublings), max_sleep),
                    has_work
                );
            }
            if (active.empty() && submitted_.empty()) {
                return;  // stopping, and nothing is left
            }
            if (!submitted_.empty()) {
                idle_rounds = 0;
            }
            for (auto& [operation, posted] : submitted_) {
                for (auto const request : posted) {
                    requests.push_back(request);
                    owner.push_back(active.size());
                }
                active.push_back({std::move(operation), posted.size(), nullptr});
            }
            submitted_.clear();
        }
        if (idle_rounds > 0 && idle_rounds <= spin_rounds) {
            std::this_thread::yield();
        }

        completed.resize(requests.size());
        statuses.resize(requests.size());
        int count = 0;
        auto const code = MPI_Testsome(
            static_cast<int>(requests.size()), requests.data(), &count, completed.data(), statuses.data()
        );
        if (code != MPI_SUCCESS && code != MPI_ERR_IN_STATUS) {
            SPILLWAY_FATAL("MPI_Testsome failed: " << mpi_error_string(code));
        }
        if (count == MPI_UNDEFINED || count == 0) {
            ++idle_rounds;
            continue;
        }
        idle_rounds = 0;
        bool any_finished = false;
        for (int i = 0; i < count; ++i) {
            auto const index = static_cast<std::size_t>(completed[static_cast<std::size_t>(i)]);
            Active& operation = active[owner[index]];
            auto const status_code = statuses[static_cast<std::size_t>(i)].MPI_ERROR;
            if (code == MPI_ERR_IN_STATUS && status_code != MPI_SUCCESS && !operation.error) {
                try {
                    check_mpi(status_code, "an MPI send or receive");
                } catch (...) {
                    operation.error = std::current_exception();
                }
            }
            any_finished |= --operation.remaining == 0;
        }
        if (!any_finished) {
            continue;
        }

        // Finish the completed operations and rebuild the arrays without them.
        std::size_t const finished = std::count_if(active.begin(), active.end(), [](Active const& operation) {
            return operation.remaining == 0;
        });
        std::vector<Active> still_active;
        std::vector<std::size_t> new_index(active.size());
        for (std::size_t i = 0; i < active.size(); ++i) {
            if (active[i].remaining == 0) {
                active[i].operation->finish(active[i].error);
            } else {
                new_index[i] = still_active.size();
                still_active.push_back(std::move(active[i]));
            }
        }
        std::size_t kept = 0;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            if (requests[i] != MPI_REQUEST_NULL) {
                requests[kept] = requests[i];
                owner[kept] = new_index[owner[i]];
                ++kept;
            }
        }
        requests.resize(kept);
        owner.resize(kept);
        active = std::move(still_active);
        {
            MutexLock lock(mutex_);
            unfinished_ -= finished;
            if (unfinished_ == 0) {
                drained_cv_.notify_all();
            }
        }
    }
}

}  // namespace spillway::comm::detail
