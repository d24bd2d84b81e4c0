#pragma once
/// @file
/// Owns MPI's initialisation for the lifetime of an object.

#include <chrono>

namespace spillway::comm {

/// Initialises MPI with `MPI_THREAD_MULTIPLE` on construction and finalises
/// it on destruction. Create one in `main` before any `MpiCommunicator`, and
/// let it outlive them all:
///
/// ```cpp
/// int main(int argc, char** argv) {
///     spillway::comm::MpiEnvironment mpi(&argc, &argv);
///     spillway::memory::BufferResource resource;
///     spillway::comm::MpiCommunicator comm(MPI_COMM_WORLD, resource);
///     ...
/// }
/// ```
///
/// A program that initialises MPI itself does not need one: `MpiCommunicator`
/// only requires that MPI is initialised with `MPI_THREAD_MULTIPLE`.
///
/// Thread safety: construct and destroy it on the thread that is to be MPI's
/// main thread; at most one per process, ever (MPI cannot be initialised
/// twice).
class MpiEnvironment {
  public:
    /// Calls `MPI_Init_thread` requiring `MPI_THREAD_MULTIPLE`. `argc` and
    /// `argv` are passed on to MPI and may be null.
    /// @throws InvalidArgument if MPI has been initialised or finalised
    ///         already, or if it does not provide `MPI_THREAD_MULTIPLE` (it
    ///         is then finalised again).
    /// `finalize_timeout` bounds the destructor's wait (the CLI passes
    /// `comm_mpi_shutdown_timeout`).
    /// @throws IoError if `MPI_Init_thread` fails.
    explicit MpiEnvironment(int* argc = nullptr, char*** argv = nullptr,
                            std::chrono::nanoseconds finalize_timeout = std::chrono::seconds(60));

    /// Calls `MPI_Finalize`, which waits for every other process: if it has
    /// not returned after `finalize_timeout` (a process is stopped or cannot
    /// be reached), prints a message saying so and ends this process with
    /// exit code 1, so that no process waits for ever.
    /// Requires: every `MpiCommunicator` has been destroyed; aborts with a
    /// message otherwise.
    ~MpiEnvironment();

    MpiEnvironment(MpiEnvironment const&) = delete;
    MpiEnvironment& operator=(MpiEnvironment const&) = delete;

  private:
    std::chrono::nanoseconds finalize_timeout_;
};

}  // namespace spillway::comm
