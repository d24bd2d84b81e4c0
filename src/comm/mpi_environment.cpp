#include <spillway/comm/mpi_environment.hpp>

#include <cstdio>
#include <cstdlib>
#include <thread>

#include <spillway/core/error.hpp>
#include <spillway/core/mutex.hpp>

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

MpiEnvironment::MpiEnvironment(int* argc, char*** argv, std::chrono::nanoseconds finalize_timeout)
    : finalize_timeout_(finalize_timeout) {
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
    setenv("OMPI_MCA_btl_tcp_flags", open_mpi_tcp_flags, 0);  // 0: what the user set stays
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
    Mutex mutex;
    CondVar changed;
    bool finalized = false;
    std::thread watchdog([&] {
        MutexLock lock(mutex);
        if (!changed.wait_for(lock, finalize_timeout_, [&]() SPILLWAY_REQUIRES(mutex) { return finalized; })) {
            std::fprintf(stderr,
                         "spillway: MPI_Finalize waited %.1f s for the other processes, one of which is stopped "
                         "or cannot be reached (comm_mpi_shutdown_timeout); exiting\n",
                         std::chrono::duration<double>(finalize_timeout_).count());
            std::_Exit(1);
        }
    });
    MPI_Finalize();
    {
        MutexLock lock(mutex);
        finalized = true;
    }
    changed.notify_all();
    watchdog.join();
}

}  // namespace spillway::comm
