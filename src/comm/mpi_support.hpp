#pragma once
/// @file
/// What the MPI backend's sources share: turning MPI error codes into
/// spillway errors, and the count of live communicators.

#include <mpi.h>

#include <atomic>
#include <string>

namespace spillway::comm::detail {

/// MPI's description of the error code `code`.
std::string mpi_error_string(int code);

/// Throws `IoError` naming `function` and MPI's description of `code` unless
/// `code` is `MPI_SUCCESS`.
void check_mpi(int code, char const* function);

/// The number of `MpiCommunicator`s alive in this process; `MpiEnvironment`
/// refuses to finalise MPI under them. Relaxed: it is only read by the
/// thread that destroys the environment, after it has joined every user.
std::atomic<int>& live_mpi_communicators() noexcept;

}  // namespace spillway::comm::detail
