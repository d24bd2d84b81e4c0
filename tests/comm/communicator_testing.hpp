#pragma once
/// @file
/// Runs one test body on every rank of a communicator group (in-process
/// threads, or the processes of an `mpirun`), and the small helpers such
/// bodies share.
///
/// The same binary serves both: run normally it instantiates the `Local`
/// suites (1 to 8 ranks as threads); run by `mpirun` with
/// `SPILLWAY_TEST_COMMUNICATOR=mpi` it initialises MPI and instantiates the
/// `Mpi` suites over `MPI_COMM_WORLD` instead. `spillway_add_mpi_tests`
/// (cmake/SpillwayHelpers.cmake) registers those runs with ctest. A module's
/// test binary links `spillway_comm_testing` and instantiates its suites as
///
/// ```cpp
/// INSTANTIATE_TEST_SUITE_P(Local, MySuite, ::testing::ValuesIn(test::local_backends()), test::BackendName());
/// INSTANTIATE_TEST_SUITE_P(Mpi, MySuite, ::testing::ValuesIn(test::mpi_backends()), test::BackendName());
/// ```

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <spillway/comm/communicator.hpp>
#include <spillway/memory/buffer_resource.hpp>

#include <gtest/gtest.h>

namespace spillway::test {

/// The resources of an in-process group of ranks, one each.
struct RankResources {
    std::vector<std::unique_ptr<memory::BufferResource>> owned;
    std::vector<memory::BufferResource*> pointers;  ///< what `LocalCommunicator::make_group` takes
};

/// `ranks` resources made with `config`.
inline RankResources rank_resources(std::size_t ranks, memory::MemoryConfig const& config = {}) {
    RankResources resources;
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        resources.owned.push_back(std::make_unique<memory::BufferResource>(config));
        resources.pointers.push_back(resources.owned.back().get());
    }
    return resources;
}

/// The communicators a suite runs on: `ranks` in-process ranks, or (when
/// `ranks` is 0) the ranks of the MPI job this process belongs to.
struct CommunicatorBackend {
    comm::Rank ranks = 0;

    [[nodiscard]] bool is_mpi() const noexcept { return ranks == 0; }
    /// A name for test names: `ranks_3` or `mpi`.
    [[nodiscard]] std::string name() const;
};

/// Prints the backend in test names and failure messages.
inline void PrintTo(CommunicatorBackend const& backend, std::ostream* out) { *out << backend.name(); }

/// Names the instances of a suite parameterised by `CommunicatorBackend`.
struct BackendName {
    std::string operator()(::testing::TestParamInfo<CommunicatorBackend> const& info) const {
        return info.param.name();
    }
};

/// Whether this process was started by `mpirun` for the MPI suites.
bool mpi_mode();

/// The in-process groups a suite runs on (1 to 8 ranks); none in MPI mode.
std::vector<CommunicatorBackend> local_backends();
/// The MPI job, once, in MPI mode; nothing otherwise.
std::vector<CommunicatorBackend> mpi_backends();

/// The body a test runs on each rank.
using RankBody = std::function<void(comm::Communicator&)>;

/// Runs `body` on every rank of `backend`, each rank with a resource of its
/// own. An exception thrown by a body fails the test. Then every rank meets
/// the others with `barrier` (so all traffic is done; bodies must not use tag
/// `max_tag`), its communicator is destroyed, and its resource must be back
/// at zero in every tier.
///
/// MPI groups split payloads into MPI messages of `mpi_test_message_bytes`
/// bytes, so that payloads of a few hundred KiB already travel in parts.
void run_on_every_rank(CommunicatorBackend const& backend, RankBody const& body);

/// The part size the MPI groups use: odd, so parts end at odd offsets.
inline constexpr std::size_t mpi_test_message_bytes = 65537;

/// How long a test waits for something that should happen before it fails.
inline constexpr std::chrono::seconds deadline{60};

/// Waits for `future` (up to `deadline`) and returns its value.
/// @throws std::runtime_error if it does not complete in time.
template <typename T>
T await(comm::Future<T>&& future) {
    if (!future.wait_for(deadline)) {
        throw std::runtime_error("a communication did not complete within the test deadline");
    }
    return future.get();
}

/// Probes `tag` from `source` until a message is there (up to `deadline`).
/// @throws std::runtime_error if none arrives in time.
comm::Incoming probe_until(comm::Communicator& communicator, comm::Tag tag, comm::Rank source = comm::any_source);

/// Receives `incoming` into a reservation of exactly its payload size and
/// waits for it.
comm::Message receive_now(comm::Communicator& communicator, comm::Incoming&& incoming);

/// Every rank sends to every rank on `tag` and waits for all of them.
void barrier(comm::Communicator& communicator, comm::Tag tag = comm::max_tag);

/// A buffer of `size` bytes of `resource` holding the pattern of `seed`.
memory::Buffer make_payload(memory::BufferResource& resource, std::size_t size, std::uint64_t seed);
/// Whether `payload` holds exactly `size` bytes of the pattern of `seed`;
/// the first differing byte's offset otherwise, as a message.
::testing::AssertionResult holds_pattern(memory::Buffer const& payload, std::size_t size, std::uint64_t seed);

/// `values` as metadata bytes.
std::vector<std::byte> metadata_of(std::initializer_list<std::uint64_t> values);
/// The `index`-th value of metadata made by `metadata_of`.
std::uint64_t metadata_value(std::span<std::byte const> metadata, std::size_t index);

/// The rank after/before `rank` in a ring of `nranks`.
inline comm::Rank next_rank(comm::Rank rank, comm::Rank nranks) { return (rank + 1) % nranks; }
inline comm::Rank previous_rank(comm::Rank rank, comm::Rank nranks) { return (rank + nranks - 1) % nranks; }

}  // namespace spillway::test
