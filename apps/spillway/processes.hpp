#pragma once
/// @file
/// The processes that run one job of the `spillway` tool together: this one
/// alone, or the processes of an MPI job (`--comm mpi`).

#include <memory>

#include <spillway/core/options.hpp>

namespace spillway::cli {

/// This process and the others of its job. With option `comm` = `mpi` it
/// initialises MPI (with `MPI_THREAD_MULTIPLE`) for its lifetime, so it must
/// outlive every MPI communicator of the job.
///
/// Thread safety: `rank` and `size` may be called concurrently; `all` is a
/// collective that every process calls once per agreement, from its main
/// thread.
class Processes {
  public:
    /// This process alone, or, with `over_mpi`, the MPI job that `mpirun`
    /// started (`argc` and `argv` are passed on to MPI; `options` give
    /// `comm_mpi_shutdown_timeout` and `collective_timeout`).
    /// @throws InvalidArgument if `over_mpi` is set in a build without MPI,
    ///         or is not set in a process that an MPI launcher started as one of
    ///         several (its environment says so: `OMPI_COMM_WORLD_SIZE`,
    ///         `PMI_SIZE` or `MV2_COMM_WORLD_SIZE` above 1).
    /// @throws IoError if MPI cannot be initialised.
    Processes(Options const& options, bool over_mpi, int* argc, char*** argv);
    ~Processes();
    Processes(Processes const&) = delete;
    Processes& operator=(Processes const&) = delete;

    /// This process's index: its MPI rank, or 0.
    [[nodiscard]] int rank() const noexcept { return rank_; }
    /// The number of processes.
    [[nodiscard]] int size() const noexcept { return size_; }

    /// Whether every process passed `ok`. A collective: blocks until every
    /// process has called it, or, over MPI, until a process that has not
    /// called it has sent nothing for `collective_timeout` (see
    /// `MpiAgreement`).
    /// @throws PeerTimeout naming that process; the job must then end
    ///         (`abort_job`).
    /// @throws IoError if an MPI call fails.
    [[nodiscard]] bool all(bool ok) const;

    /// Over MPI, ends every process of the job at once with `exit_code`
    /// (`MPI_Abort`): for a job one of whose processes stopped answering, which
    /// neither finishing its sends nor finalising MPI would wait out. Without
    /// MPI, does nothing.
    void abort_job(int exit_code) const;

  private:
    struct Mpi;
    std::unique_ptr<Mpi> mpi_;  ///< null unless the job runs over MPI
    int rank_ = 0;
    int size_ = 1;
};

/// This process's rank among the processes an MPI launcher started, as its
/// environment says (`OMPI_COMM_WORLD_RANK`, `PMI_RANK` or
/// `MV2_COMM_WORLD_RANK`), or 0 if no launcher started it: which process
/// reports an error found before `Processes` exists.
[[nodiscard]] int launcher_rank() noexcept;

}  // namespace spillway::cli
