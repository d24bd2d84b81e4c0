#include <spillway/comm/mpi_environment.hpp>

#include <spillway/core/error.hpp>

#include "comm/mpi_support.hpp"

namespace spillway::comm {

namespace detail {

std::string mpi_error_string(int code) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
        return "MPI error " + std::to_string(code);
    }
    return std::string(text, static_cast<std::size_t>(length));
}

void check_mpi(int code, char const* function) {
    SPILLWAY_EXPECTS(
        code == MPI_SUCCESS, function << " failed: " << mpi_error_string(code), IoError
    );
}

std::atomic<int>& live_mpi_communicators() noexcept {
    static std::atomic<int> count{0};
    return count;
}

}  // namespace detail

MpiEnvironment::MpiEnvironment(int* argc, char*** argv) {
    int initialized = 0;
    int finalized = 0;
    detail::check_mpi(MPI_Initialized(&initialized), "MPI_Initialized");
    detail::check_mpi(MPI_Finalized(&finalized), "MPI_Finalized");
    SPILLWAY_EXPECTS(
        initialized == 0 && finalized == 0,
        "MPI has already been " << (finalized != 0 ? "finalised" : "initialised")
                                << "; create at most one MpiEnvironment per process",
        InvalidArgument
    );
    int provided = MPI_THREAD_SINGLE;
    detail::check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    if (provided < MPI_THREAD_MULTIPLE) {
        MPI_Finalize();
        SPILLWAY_FAIL(
            "this MPI provides thread level " << provided << ", below MPI_THREAD_MULTIPLE ("
                << MPI_THREAD_MULTIPLE << ") which spillway needs; use an MPI built with thread "
                << "support (Debian's OpenMPI is)",
            InvalidArgument
        );
    }
}

MpiEnvironment::~MpiEnvironment() {
    if (auto const live = detail::live_mpi_communicators().load(std::memory_order_relaxed); live != 0) {
        SPILLWAY_FATAL(
            "MpiEnvironment destroyed while " << live
                << " MpiCommunicator(s) are alive; destroy them before finalising MPI"
        );
    }
    MPI_Finalize();
}

}  // namespace spillway::comm
