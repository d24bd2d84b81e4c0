#pragma once
/// @file
/// `spillway.MpiCommunicator`: this process's rank of an MPI communicator
/// that mpi4py (or any other MPI binding) made, with its buffer resource.

#include <cstdint>
#include <memory>

#include <spillway/comm/communicator.hpp>
#include <spillway/core/options.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/shuffle/op_id.hpp>

#include "resource_figures.hpp"

namespace spillway::python {

/// This process's rank of the MPI communicator whose handle is `handle`
/// (`MPI_Comm` as an integer: mpi4py's `MPI._handleof(comm)`), duplicated
/// by `comm::MpiCommunicator`, with a buffer resource of its own that holds
/// the process's HOST limit. Each shuffle made on it takes the next op id,
/// so every process must make its shuffles in the same order.
///
/// Thread safety: `communicator`, `rank`, `size` and `figures` may be called
/// concurrently; `next_op_id` and `close` are externally synchronized.
class MpiRank {
  public:
    /// Reads the memory, MPI and shuffle options of `options`: the last for
    /// the shuffles made on it, which start from these `options()`.
    /// @throws InvalidArgument if an option is malformed, one set in code is
    ///         none of those (a misspelt name), or MPI is not initialised
    ///         with `MPI_THREAD_MULTIPLE` (mpi4py's default).
    /// @throws IoError if the communicator cannot be duplicated, or the spill
    ///         directory cannot be made.
    MpiRank(std::uintptr_t handle, Options const& options);
    ~MpiRank();
    MpiRank(MpiRank const&) = delete;
    MpiRank& operator=(MpiRank const&) = delete;

    /// The communicator, for a shuffle.
    /// @throws InvalidArgument after `close`.
    [[nodiscard]] comm::Communicator& communicator() const;
    [[nodiscard]] int rank() const noexcept { return rank_; }
    [[nodiscard]] int size() const noexcept { return size_; }
    /// The options it was made with, each marked read.
    [[nodiscard]] Options const& options() const noexcept { return options_; }

    /// The op id of the next shuffle made on this communicator: 0, 1, ...,
    /// `shuffle::max_op_id`, then 0 again (a shuffle whose id is still in
    /// use when it comes round refuses to start).
    [[nodiscard]] shuffle::OpId next_op_id() noexcept;

    /// The figures of this rank's resource so far.
    [[nodiscard]] ResourceFigures figures() const;

    /// Frees the duplicated communicator and the resource (spill files
    /// included). Every shuffle made on it must be gone; MPI must still be
    /// initialised. Idempotent.
    void close() noexcept;

  private:
    Options options_;
    std::unique_ptr<memory::BufferResource> resource_;  ///< null after `close`
    std::unique_ptr<comm::Communicator> communicator_;  ///< null after `close`
    int rank_ = 0;
    int size_ = 1;
    shuffle::OpId next_op_id_ = 0;
};

}  // namespace spillway::python
