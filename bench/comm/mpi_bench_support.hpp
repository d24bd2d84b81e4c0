#pragma once
/// @file
/// What the MPI benchmarks share: starting themselves under mpirun, and
/// timing an exchange by its slowest rank.
///
/// Requires: the including target defines `SPILLWAY_MPIEXEC`, the path of
/// mpirun (see bench/comm/CMakeLists.txt).

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace spillway::bench {

/// Re-runs this program, with its arguments, as `ranks` MPI processes
/// (`mpirun --allow-run-as-root --oversubscribe -np ranks`). Returns only if
/// mpirun cannot be started, with status 1.
inline int relaunch_under_mpirun(int argc, char** argv, std::string const& ranks) {
    std::vector<std::string> arguments{
        SPILLWAY_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", ranks,
        std::filesystem::read_symlink("/proc/self/exe").string()
    };
    for (int i = 1; i < argc; ++i) {
        arguments.emplace_back(argv[i]);
    }
    std::vector<char*> pointers;
    for (auto& argument : arguments) {
        pointers.push_back(argument.data());
    }
    pointers.push_back(nullptr);
    execv(SPILLWAY_MPIEXEC, pointers.data());
    std::perror((std::string(argv[0]) + ": cannot run " SPILLWAY_MPIEXEC).c_str());
    return 1;
}

/// The slowest rank's time for `exchange`, in seconds; every rank of
/// `MPI_COMM_WORLD` calls it.
template <typename Exchange>
double slowest_seconds(Exchange exchange) {
    MPI_Barrier(MPI_COMM_WORLD);
    auto const start = std::chrono::steady_clock::now();
    exchange();
    double const mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

}  // namespace spillway::bench
