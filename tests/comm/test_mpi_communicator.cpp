// Checks only the MPI backend has: they run in the MPI suites (under mpirun).
#include <spillway/comm/mpi_communicator.hpp>

#include <common/error_matchers.hpp>

#include <climits>
#include <cstdlib>
#include <string_view>

#include <spillway/comm/mpi_environment.hpp>
#include <spillway/core/error.hpp>

#include <gtest/gtest.h>

#include <comm/communicator_testing.hpp>

using namespace spillway;
using namespace spillway::comm;

namespace {

class MpiOnly : public ::testing::TestWithParam<test::CommunicatorBackend> {};
// Outside MPI mode the suite has no instances, on purpose.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(MpiOnly);

}  // namespace

TEST_P(MpiOnly, MpiCannotBeInitialisedTwice) {
    EXPECT_THROW_WITH(MpiEnvironment{}, InvalidArgument, "already been initialised");
}

TEST_P(MpiOnly, OpenMpisTcpTransportIsToldToSendLargeMessagesWithoutPut) {
    // The test environment's MpiEnvironment set it; mpirun does not.
    char const* const flags = std::getenv("OMPI_MCA_btl_tcp_flags");
    ASSERT_NE(flags, nullptr);
    EXPECT_STREQ(flags, MpiEnvironment::open_mpi_tcp_flags);
    EXPECT_EQ(std::string_view(flags).find("put"), std::string_view::npos);
}

TEST_P(MpiOnly, PayloadsMayChangeInTransitOnlyToAndFromRanksOnOtherHosts) {
    // On one host (mpirun here) every rank shares it; across the hosts of
    // the multihost tests each rank has one of its own.
    memory::BufferResource resource;
    MpiCommunicator const communicator(MPI_COMM_WORLD, resource);
    MPI_Comm host = MPI_COMM_NULL;
    ASSERT_EQ(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host), MPI_SUCCESS);
    int on_this_host = 0;
    MPI_Comm_size(host, &on_this_host);
    MPI_Comm_free(&host);
    int copied_in_memory = 0;
    for (Rank peer = 0; peer < communicator.nranks(); ++peer) {
        copied_in_memory += communicator.payloads_may_change_in_transit(peer) ? 0 : 1;
    }
    EXPECT_EQ(copied_in_memory, on_this_host);
    EXPECT_FALSE(communicator.payloads_may_change_in_transit(communicator.rank()));
}

TEST_P(MpiOnly, APartSizeMpiCannotCountIsRefusedBeforeAnythingCollectiveHappens) {
    memory::BufferResource resource;
    MpiConfig config;
    config.max_message_bytes = 0;
    EXPECT_THROW_WITH(MpiCommunicator(MPI_COMM_WORLD, resource, config), InvalidArgument, "comm_mpi_max_message_bytes");
    config.max_message_bytes = std::size_t{INT_MAX} + 1;
    EXPECT_THROW_WITH(MpiCommunicator(MPI_COMM_WORLD, resource, config), InvalidArgument, "INT_MAX");
}

TEST_P(MpiOnly, ACommunicatorSplitFromTheWorldOrMpiCommSelfWorks) {
    // Only MPI_COMM_WORLD need carry MPI_TAG_UB; these may not.
    memory::BufferResource resource;
    int world_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm alone = MPI_COMM_NULL;
    ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, world_rank, 0, &alone), MPI_SUCCESS);
    {
        MpiCommunicator const split(alone, resource);
        EXPECT_EQ(split.rank(), 0);
        EXPECT_EQ(split.nranks(), 1);
        MpiCommunicator const self(MPI_COMM_SELF, resource);
        EXPECT_EQ(self.nranks(), 1);
    }
    MPI_Comm_free(&alone);
}

INSTANTIATE_TEST_SUITE_P(Mpi, MpiOnly, ::testing::ValuesIn(test::mpi_backends()), test::BackendName());
