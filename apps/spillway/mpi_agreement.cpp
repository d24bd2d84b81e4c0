#include "mpi_agreement.hpp"

#include <algorithm>
#include <optional>
#include <sstream>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/core/logging.hpp>
#include <spillway/core/options.hpp>

namespace spillway::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int heartbeat_tag = 0;  ///< votes have 1, 2, ...
/// How often the heartbeat thread looks for heartbeats and for a stop.
constexpr auto heartbeat_poll = std::chrono::milliseconds(50);
/// The longest pause of a vote between two looks at its messages.
constexpr auto longest_vote_pause = std::chrono::milliseconds(10);

/// @throws IoError naming `call` unless `result` is `MPI_SUCCESS`.
void check(int result, char const* call) {
    SPILLWAY_EXPECTS(result == MPI_SUCCESS, call << " failed while the processes agreed how the job went", IoError);
}

}  // namespace

MpiAgreement::MpiAgreement(std::chrono::nanoseconds timeout) : timeout_(timeout) {
    check(MPI_Comm_dup(MPI_COMM_WORLD, &communicator_), "MPI_Comm_dup");
    check(MPI_Comm_set_errhandler(communicator_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    MPI_Comm_rank(communicator_, &rank_);
    MPI_Comm_size(communicator_, &size_);
    {
        MutexLock lock(mutex_);
        last_heard_.assign(static_cast<std::size_t>(size_), Clock::now());
    }
    if (size_ > 1) {
        heartbeats_ = std::jthread([this](std::stop_token const& stop) { exchange_heartbeats(stop); });
    }
}

MpiAgreement::~MpiAgreement() {
    if (heartbeats_.joinable()) {
        heartbeats_.request_stop();
        heartbeats_.join();
    }
    MPI_Comm_free(&communicator_);
}

void MpiAgreement::exchange_heartbeats(std::stop_token const& stop) {
    static char const nothing = 0;
    auto const period = timeout_ / 4;
    std::vector<MPI_Request> sends(static_cast<std::size_t>(size_), MPI_REQUEST_NULL);
    auto next_send = Clock::now();
    while (!stop.stop_requested()) {
        auto const now = Clock::now();
        if (now >= next_send) {
            for (int peer = 0; peer < size_; ++peer) {
                auto& send = sends[static_cast<std::size_t>(peer)];
                int sent = 1;
                if (send != MPI_REQUEST_NULL) {
                    MPI_Test(&send, &sent, MPI_STATUS_IGNORE);
                }
                // A peer that has not taken the last heartbeat gets no other.
                if (peer != rank_ && sent != 0
                    && MPI_Isend(&nothing, 0, MPI_BYTE, peer, heartbeat_tag, communicator_, &send) != MPI_SUCCESS) {
                    SPILLWAY_LOG(warn, "cannot send a heartbeat to rank " << peer << "; it may take this process "
                                                                           << "for stopped");
                }
            }
            next_send = now + period;
        }
        while (true) {
            int arrived = 0;
            MPI_Status status;
            if (MPI_Iprobe(MPI_ANY_SOURCE, heartbeat_tag, communicator_, &arrived, &status) != MPI_SUCCESS
                || arrived == 0) {
                break;
            }
            char ignored = 0;
            MPI_Recv(&ignored, 1, MPI_BYTE, status.MPI_SOURCE, heartbeat_tag, communicator_, MPI_STATUS_IGNORE);
            MutexLock lock(mutex_);
            last_heard_[static_cast<std::size_t>(status.MPI_SOURCE)] = Clock::now();
        }
        auto const until_send = std::max<Clock::duration>(next_send - Clock::now(), Clock::duration::zero());
        std::this_thread::sleep_for(std::min<Clock::duration>(heartbeat_poll, until_send));
    }
    for (auto& send : sends) {
        if (send != MPI_REQUEST_NULL) {
            MPI_Request_free(&send);  // to a peer that stopped: it completes, or MPI_Finalize drops it
        }
    }
}

bool MpiAgreement::all(bool ok) {
    if (size_ == 1) {
        return ok;
    }
    int const tag = heartbeat_tag + 1 + votes_++;
    sent_vote_ = ok ? 1 : 0;
    auto const peers = static_cast<std::size_t>(size_);
    std::vector<int> votes(peers, 1);
    std::vector<MPI_Request> sends(peers, MPI_REQUEST_NULL);
    std::vector<MPI_Request> receives(peers, MPI_REQUEST_NULL);
    for (int peer = 0; peer < size_; ++peer) {
        if (peer != rank_) {
            auto const index = static_cast<std::size_t>(peer);
            check(MPI_Irecv(&votes[index], 1, MPI_INT, peer, tag, communicator_, &receives[index]), "MPI_Irecv");
            check(MPI_Isend(&sent_vote_, 1, MPI_INT, peer, tag, communicator_, &sends[index]), "MPI_Isend");
        }
    }
    auto pause = std::chrono::microseconds(100);
    auto last_look = Clock::now();
    while (true) {
        auto const now = Clock::now();
        if (now - std::exchange(last_look, now) >= timeout_ / 2) {
            // This process did not run meanwhile (stopped, or starved): that
            // silence is its own, not its peers'.
            MutexLock lock(mutex_);
            std::ranges::fill(last_heard_, now);
        }
        std::vector<std::size_t> waiting;
        for (std::size_t peer = 0; peer < peers; ++peer) {
            int received = 1;
            if (receives[peer] != MPI_REQUEST_NULL) {
                check(MPI_Test(&receives[peer], &received, MPI_STATUS_IGNORE), "MPI_Test");
            }
            if (received == 0) {
                waiting.push_back(peer);
            }
        }
        if (waiting.empty()) {
            break;
        }
        std::optional<std::pair<std::size_t, Clock::duration>> silent;  // a peer, and how long
        {
            MutexLock lock(mutex_);
            for (auto const peer : waiting) {
                if (now - last_heard_[peer] > timeout_) {
                    silent.emplace(peer, now - last_heard_[peer]);
                    break;
                }
            }
        }
        if (silent) {
            // The votes not received are cancelled; the sends go on from
            // `sent_vote_`, which outlives them, or end with the job.
            for (std::size_t peer = 0; peer < peers; ++peer) {
                if (receives[peer] != MPI_REQUEST_NULL) {
                    MPI_Cancel(&receives[peer]);
                    MPI_Wait(&receives[peer], MPI_STATUS_IGNORE);
                }
                if (sends[peer] != MPI_REQUEST_NULL) {
                    MPI_Request_free(&sends[peer]);
                }
            }
            std::ostringstream message;
            message << "rank " << silent->first << " sent nothing for " << format_duration(silent->second)
                    << " while the processes agreed whether each got through the job (collective_timeout is "
                    << format_duration(timeout_) << "): it has stopped, hangs or cannot be reached";
            SPILLWAY_FAIL(message.str(), PeerTimeout);
        }
        std::this_thread::sleep_for(pause);
        pause = std::min<std::chrono::microseconds>(pause * 2, longest_vote_pause);
    }
    check(MPI_Waitall(size_, sends.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    return ok && std::ranges::all_of(votes, [](int vote) { return vote == 1; });
}

}  // namespace spillway::cli
