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
    /// What the constructor sets `OMPI_MCA_btl_tcp_flags` to, unless the
    /// environment sets it: Open MPI 4's default for its TCP transport
    /// without `put`, so that large messages go in 128 KiB fragments
    /// (`btl_tcp_max_send_size`) that interleave on a socket.
    static constexpr char const* open_mpi_tcp_flags = "send,inplace,need-ack,need-csum,hetero-rdma";

    /// Calls `MPI_Init_thread` requiring `MPI_THREAD_MULTIPLE`. `argc` and
    /// `argv` are passed on to MPI and may be null.
    ///
    /// Before that, unless the environment sets `OMPI_MCA_btl_tcp_flags`,
    /// it sets it to Open MPI's default without `put`
    /// (`open_mpi_tcp_flags`), which other MPIs ignore. With `put`, Open MPI's
    /// TCP transport sends the bulk of a large message as one fragment once
    /// the receiver has acknowledged it, and a rank's acknowledgement of its
    /// peer's message waits on their socket behind its own fragments: two
    /// ranks that send each other large messages, whose receives are posted
    /// only once they arrive, take turns instead of sending at once
    /// (docs/architecture.md, comm/, has the figures). Sets an environment
    /// variable: construct it before starting threads, as `main` does.
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
