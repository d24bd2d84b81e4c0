// Two processes of an MPI job voting with `MpiAgreement` (timeout 2 s, far
// above a loaded machine's scheduling delays), run by the apps tests under
// mpirun: rank 1 first takes two and a half timeouts to vote
// while alive, which must not fail the vote; then it stops itself
// (SIGSTOP) instead of voting, and rank 0 must fail naming it. Rank 0
// prints what it saw, then ends the job with exit code 1 (`MPI_Abort`).
#include <csignal>
#include <cstdio>
#include <thread>

#include <spillway/comm/mpi_environment.hpp>
#include <spillway/core/error.hpp>

#include "mpi_agreement.hpp"

int main(int argc, char** argv) {
    using namespace std::chrono_literals;
    spillway::comm::MpiEnvironment const environment(&argc, &argv);
    spillway::cli::MpiAgreement agreement(2s);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        std::this_thread::sleep_for(5s);
    }
    bool const slow_but_alive = agreement.all(true);
    if (rank == 0) {
        std::printf("slow vote: %s\n", slow_but_alive ? "all ok" : "not ok");
        std::fflush(stdout);
    }
    if (rank == 1) {
        std::raise(SIGSTOP);
    }
    auto const started = std::chrono::steady_clock::now();
    try {
        static_cast<void>(agreement.all(true));
        if (rank == 0) {
            std::printf("stopped vote: ended\n");
        }
    } catch (spillway::PeerTimeout const& error) {
        auto const waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        std::printf("stopped vote: PeerTimeout after %.1f s: %s\n", waited, error.what());
    }
    std::fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
}
