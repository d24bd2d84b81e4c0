#include "mpi_rank.hpp"

#include <mpi.h>

#include <spillway/comm/mpi_communicator.hpp>
#include <spillway/comm/mpi_config.hpp>
#include <spillway/core/error.hpp>
#include <spillway/memory/memory_config.hpp>
#include <spillway/shuffle/shuffle_config.hpp>

namespace spillway::python {

MpiRank::MpiRank(std::uintptr_t handle, Options const& options) : options_(options) {
    auto const memory_config = memory::MemoryConfig::from_options(options_);
    auto const mpi_config = comm::MpiConfig::from_options(options_);
    static_cast<void>(shuffle::ShuffleConfig::from_options(options_));
    options_.expect_read(OptionSource::code, "spillway.MpiCommunicator");
    int initialized = 0;
    MPI_Initialized(&initialized);
    SPILLWAY_EXPECTS(initialized != 0, "MPI is not initialised: import mpi4py.MPI first", InvalidArgument);
    resource_ = std::make_unique<memory::BufferResource>(memory_config);
    // Open MPI's MPI_Comm is a pointer, and mpi4py hands it out as an integer.
    auto const comm = reinterpret_cast<MPI_Comm>(handle);  // NOLINT(performance-no-int-to-ptr)
    communicator_ = std::make_unique<comm::MpiCommunicator>(comm, *resource_, mpi_config);
    rank_ = communicator_->rank();
    size_ = communicator_->nranks();
}

MpiRank::~MpiRank() { close(); }

comm::Communicator& MpiRank::communicator() const {
    SPILLWAY_EXPECTS(communicator_ != nullptr, "the communicator is closed", InvalidArgument);
    return *communicator_;
}

shuffle::OpId MpiRank::next_op_id() noexcept {
    auto const id = next_op_id_;
    next_op_id_ = id == shuffle::max_op_id ? 0 : static_cast<shuffle::OpId>(id + 1);
    return id;
}

ResourceFigures MpiRank::figures() const {
    SPILLWAY_EXPECTS(resource_ != nullptr, "the communicator is closed", InvalidArgument);
    return ResourceFigures::of({&resource_, 1});
}

void MpiRank::close() noexcept {
    communicator_.reset();
    resource_.reset();
}

}  // namespace spillway::python
