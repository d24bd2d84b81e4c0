#include "processes.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>

#include <spillway/core/error.hpp>

#ifdef SPILLWAY_CLI_HAVE_MPI
#include <mpi.h>

#include <spillway/comm/mpi_config.hpp>
#include <spillway/comm/mpi_environment.hpp>
#include <spillway/shuffle/shuffle_config.hpp>

#include "mpi_agreement.hpp"
#endif

namespace spillway::cli {
namespace {

/// The variables in which MPI launchers give each process the number of
/// processes they started: Open MPI's mpirun, MPICH's and Intel MPI's Hydra
/// (and Slurm's srun with PMI-2), MVAPICH's.
constexpr char const* launcher_size_variables[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"};
/// The same launchers' variables for the process's rank.
constexpr char const* launcher_rank_variables[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK"};

/// @throws InvalidArgument if an MPI launcher started this process as one of
///         several: without MPI, each would run the whole job on its own.
void check_not_one_of_several_launched() {
    for (auto const* variable : launcher_size_variables) {
        auto const* value = std::getenv(variable);
        if (value == nullptr) {
            continue;
        }
        long processes = 0;
        auto const* end = value + std::strlen(value);
        auto const parsed = std::from_chars(value, end, processes);
        SPILLWAY_EXPECTS(parsed.ec != std::errc{} || parsed.ptr != end || processes <= 1,
                         "an MPI launcher started " << processes << " spillway processes (" << variable << "="
                                                    << value << "), but --comm is local, so each would run the "
                                                    << "whole job on its own: add --comm mpi (shuffle, partition "
                                                    << "and tpch run over MPI; generate does not), or start one "
                                                    << "process without the launcher",
                         InvalidArgument);
    }
}

}  // namespace

int launcher_rank() noexcept {
    for (auto const* variable : launcher_rank_variables) {
        auto const* value = std::getenv(variable);
        if (value == nullptr) {
            continue;
        }
        int rank = 0;
        auto const* end = value + std::strlen(value);
        auto const parsed = std::from_chars(value, end, rank);
        if (parsed.ec == std::errc{} && parsed.ptr == end && rank >= 0) {
            return rank;
        }
    }
    return 0;
}

#ifdef SPILLWAY_CLI_HAVE_MPI
struct Processes::Mpi {
    Mpi(int* argc, char*** argv, std::chrono::nanoseconds finalize_timeout, std::chrono::nanoseconds timeout)
        : environment(argc, argv, finalize_timeout), agreement(timeout) {}
    comm::MpiEnvironment environment;
    MpiAgreement agreement;  ///< after the environment: gone before MPI is finalised
};
#else
struct Processes::Mpi {};
#endif

Processes::Processes(Options const& options, bool over_mpi, int* argc, char*** argv) {
    if (!over_mpi) {
        check_not_one_of_several_launched();
        return;
    }
#ifdef SPILLWAY_CLI_HAVE_MPI
    mpi_ = std::make_unique<Mpi>(argc, argv, comm::MpiConfig::from_options(options).shutdown_timeout,
                                 shuffle::ShuffleConfig::from_options(options).collective_timeout);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
#else
    static_cast<void>(options);
    static_cast<void>(argc);
    static_cast<void>(argv);
    SPILLWAY_FAIL("this spillway was built without MPI, so --comm mpi is not available; install libopenmpi-dev "
                  "and rebuild, or use --comm local",
                  InvalidArgument);
#endif
}

Processes::~Processes() = default;

void Processes::abort_job(int exit_code) const {
#ifdef SPILLWAY_CLI_HAVE_MPI
    if (mpi_) {
        MPI_Abort(MPI_COMM_WORLD, exit_code);
    }
#else
    static_cast<void>(exit_code);
#endif
}

bool Processes::all(bool ok) const {
    if (!mpi_) {
        return ok;
    }
#ifdef SPILLWAY_CLI_HAVE_MPI
    return mpi_->agreement.all(ok);
#else
    return ok;
#endif
}

}  // namespace spillway::cli
