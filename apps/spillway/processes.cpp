#include "processes.hpp"

#include <spillway/core/error.hpp>

#ifdef SPILLWAY_CLI_HAVE_MPI
#include <mpi.h>

#include <spillway/comm/mpi_environment.hpp>
#endif

namespace spillway::cli {

#ifdef SPILLWAY_CLI_HAVE_MPI
struct Processes::Mpi {
    Mpi(int* argc, char*** argv) : environment(argc, argv) {}
    comm::MpiEnvironment environment;
};
#else
struct Processes::Mpi {};
#endif

Processes::Processes(Options const& options, int* argc, char*** argv) {
    if (options.get_choice("comm", {"local", "mpi"}, "local") == "local") {
        return;
    }
#ifdef SPILLWAY_CLI_HAVE_MPI
    mpi_ = std::make_unique<Mpi>(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
#else
    static_cast<void>(argc);
    static_cast<void>(argv);
    SPILLWAY_FAIL("this spillway was built without MPI, so --comm mpi is not available; install libopenmpi-dev "
                  "and rebuild, or use --comm local",
                  InvalidArgument);
#endif
}

Processes::~Processes() = default;

bool Processes::all(bool ok) const {
    if (!mpi_) {
        return ok;
    }
#ifdef SPILLWAY_CLI_HAVE_MPI
    int value = ok ? 1 : 0;
    SPILLWAY_EXPECTS(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS,
                     "MPI_Allreduce failed while the processes agreed whether to start", IoError);
    return value == 1;
#else
    return ok;
#endif
}

}  // namespace spillway::cli
