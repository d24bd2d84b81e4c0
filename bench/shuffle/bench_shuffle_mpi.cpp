// A shuffle between MPI ranks against MPI_Alltoallv of the same bytes in the
// same run.
//
// Usage: spillway_bench_shuffle_mpi [PER_RANK [CHUNK [ITERATIONS [RANKS]]]]
//
// Run on its own (as scripts/bench does), it re-launches itself under
// `mpirun --oversubscribe -np RANKS` (4 by default); run under mpirun, it is
// one rank. Each rank inserts PER_RANK bytes (256 MiB) in chunks of CHUNK
// bytes (4 MiB) round 4 * RANKS partitions (round-robin owners), and extracts
// its partitions; the shuffler's construction is timed too, the filling of
// the chunks is not. MPI_Alltoallv then moves, between buffers allocated and
// touched once, exactly the bytes each rank's chunks send each rank (its own
// included). Each exchange's time is the slowest rank's; medians over
// ITERATIONS (5) are compared:
//
//   METRIC shuffle_mpi_vs_alltoallv <MPI_Alltoallv time / shuffle time> ratio
//
// 1.0 means the shuffle is as fast as MPI_Alltoallv; higher is faster. When
// every rank is alone on its node (as under tests/multihost/run_on_hosts.sh,
// which bench_shuffle_multihost.sh uses), the metric is named
// shuffle_multihost_vs_alltoallv instead.
#include <mpi.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <spillway/comm/mpi_communicator.hpp>
#include <spillway/comm/mpi_environment.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/shuffle/shuffler.hpp>

#include <comm/mpi_bench_support.hpp>

#include "shuffle_bench_support.hpp"

using namespace spillway;


int main(int argc, char** argv) {
    if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) {
        return bench::relaunch_under_mpirun(argc, argv, argc > 4 ? argv[4] : "4");
    }
    comm::MpiEnvironment mpi(&argc, &argv);
    return bench::guarded_main("spillway_bench_shuffle_mpi", [&] {
        auto const per_rank = bench::size_argument(argc, argv, 1, std::uint64_t{256} << 20);
        auto const chunk = bench::size_argument(argc, argv, 2, std::uint64_t{4} << 20);
        int const iterations = argc > 3 ? std::stoi(argv[3]) : 5;
        int rank = 0;
        int nranks = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
        MPI_Comm node;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
        int on_my_node = 0;
        MPI_Comm_size(node, &on_my_node);
        MPI_Comm_free(&node);
        int most_on_a_node = 0;
        MPI_Allreduce(&on_my_node, &most_on_a_node, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        bool const alone_on_each_node = nranks > 1 && most_on_a_node == 1;
        auto const partitions = static_cast<shuffle::PartitionId>(4 * nranks);
        auto const chunks_per_rank = per_rank / chunk;
        auto const owner = [&](int from, std::uint64_t index) {
            return static_cast<int>(bench::partition_of(from, index, partitions) % static_cast<unsigned>(nranks));
        };

        // MPI_Alltoallv's matrix: what this rank's chunks send each rank, and
        // what each rank's chunks send this one.
        std::vector<int> send_counts(nranks), send_offsets(nranks), receive_counts(nranks), receive_offsets(nranks);
        for (std::uint64_t index = 0; index < chunks_per_rank; ++index) {
            send_counts[owner(rank, index)] += static_cast<int>(chunk);
            for (int from = 0; from < nranks; ++from) {
                if (owner(from, index) == rank) {
                    receive_counts[from] += static_cast<int>(chunk);
                }
            }
        }
        for (int peer = 1; peer < nranks; ++peer) {
            send_offsets[peer] = send_offsets[peer - 1] + send_counts[peer - 1];
            receive_offsets[peer] = receive_offsets[peer - 1] + receive_counts[peer - 1];
        }
        std::vector<std::byte> send_matrix(static_cast<std::size_t>(send_offsets.back() + send_counts.back()), std::byte{1});
        std::vector<std::byte> receive_matrix(static_cast<std::size_t>(receive_offsets.back() + receive_counts.back()), std::byte{0});

        memory::BufferResource resource;
        bench::BenchBytes const bytes(chunk);
        std::vector<double> shuffle_seconds;
        std::vector<double> alltoallv_seconds;
        std::uint64_t extracted = 0;
        {
            comm::MpiCommunicator communicator(MPI_COMM_WORLD, resource);
            for (int iteration = 0; iteration < iterations; ++iteration) {
                std::vector<memory::Buffer> chunks;
                for (std::uint64_t index = 0; index < chunks_per_rank; ++index) {
                    chunks.push_back(bytes.make_buffer(resource, chunk, bench::salt_of(rank, index)));
                }
                shuffle_seconds.push_back(bench::slowest_seconds([&] {
                    shuffle::Shuffler shuffler(communicator, 0, partitions, resource);
                    bench::insert_all(shuffler, rank, chunks);
                    extracted = bench::extract_all(shuffler);
                }));
                alltoallv_seconds.push_back(bench::slowest_seconds([&] {
                    MPI_Alltoallv(send_matrix.data(), send_counts.data(), send_offsets.data(), MPI_BYTE,
                                  receive_matrix.data(), receive_counts.data(), receive_offsets.data(), MPI_BYTE,
                                  MPI_COMM_WORLD);
                }));
            }
        }
        SPILLWAY_EXPECTS(
            extracted == receive_matrix.size(), "rank " << rank << " extracted " << extracted << " bytes, expected "
                                                        << receive_matrix.size(),
            CorruptData
        );
        if (rank == 0) {
            auto const shuffle = bench::median(shuffle_seconds);
            auto const alltoallv = bench::median(alltoallv_seconds);
            double const gib = static_cast<double>(per_rank) * nranks / (1 << 30);
            std::cout << nranks << " ranks, " << gib << " GiB per exchange in " << (chunk >> 10) << " KiB chunks, "
                      << iterations << " iterations (median): shuffle " << shuffle * 1e3 << " ms (" << gib / shuffle
                      << " GiB/s), MPI_Alltoallv " << alltoallv * 1e3 << " ms (" << gib / alltoallv << " GiB/s)\n";
            bench::metric(
                alone_on_each_node ? "shuffle_multihost_vs_alltoallv" : "shuffle_mpi_vs_alltoallv", alltoallv / shuffle,
                "ratio"
            );
        }
    });
}
