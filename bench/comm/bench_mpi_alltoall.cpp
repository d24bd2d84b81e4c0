// All-to-all of a byte matrix over spillway's MpiCommunicator, against
// MPI_Alltoallv of the same matrix in the same run.
//
// Usage: spillway_bench_mpi_alltoall [MIB_PER_PAIR [ITERATIONS [RANKS]]]
//
// Run on its own (as scripts/bench does), it re-launches itself under
// `mpirun --oversubscribe -np RANKS` (4 by default); run under mpirun, it is
// one rank. Rank i sends rank j between 0.5 and 2 times MIB_PER_PAIR MiB
// (8 by default), so the exchange is uneven as a real shuffle's is. Each
// iteration runs both exchanges, spillway's first; each exchange's time is
// the slowest rank's. A first iteration, not counted, pays for what a
// process pays once: spillway's receive buffers are touched for the first
// time, MPI sets up its connections and buffers (on the benchmark machine it
// took 21 to 181 ms for spillway and 130 to 166 ms for MPI_Alltoallv, against
// about 9 and 18 ms after). The medians of the ITERATIONS (5) after it are
// compared:
//
//   METRIC mpi_alltoall_vs_alltoallv <MPI_Alltoallv time / spillway time> ratio
//
// 1.0 means spillway moves the matrix as fast as MPI_Alltoallv; higher is faster.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <spillway/comm/mpi_communicator.hpp>
#include <spillway/comm/mpi_environment.hpp>
#include <spillway/memory/buffer_resource.hpp>

#include "metric.hpp"
#include "mpi_bench_support.hpp"

using namespace spillway;

namespace {

constexpr comm::Tag tag = 0;

/// The bytes rank `from` sends rank `to`: 0.5 to 2 times `per_pair`.
std::size_t pair_bytes(int from, int to, std::size_t per_pair) {
    return per_pair * static_cast<std::size_t>(1 + (from * 7 + to * 3) % 4) / 2;
}

std::byte fill_byte(int from, int to) {
    return static_cast<std::byte>(from * 16 + to + 1);
}

}  // namespace

int main(int argc, char** argv) {
    if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) {
        return bench::relaunch_under_mpirun(argc, argv, argc > 3 ? argv[3] : "4");
    }
    std::size_t const per_pair = (argc > 1 ? std::stoul(argv[1]) : 8) << 20;
    int const iterations = argc > 2 ? std::stoi(argv[2]) : 5;

    comm::MpiEnvironment mpi(&argc, &argv);
    memory::BufferResource resource;
    int rank = 0;
    int nranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    // MPI_Alltoallv's matrix, allocated and filled once.
    std::vector<int> send_counts(nranks), send_offsets(nranks), receive_counts(nranks), receive_offsets(nranks);
    int send_total = 0;
    int receive_total = 0;
    for (int peer = 0; peer < nranks; ++peer) {
        send_offsets[peer] = send_total;
        send_counts[peer] = static_cast<int>(pair_bytes(rank, peer, per_pair));
        send_total += send_counts[peer];
        receive_offsets[peer] = receive_total;
        receive_counts[peer] = static_cast<int>(pair_bytes(peer, rank, per_pair));
        receive_total += receive_counts[peer];
    }
    std::vector<std::byte> send_matrix(static_cast<std::size_t>(send_total));
    std::vector<std::byte> receive_matrix(static_cast<std::size_t>(receive_total));
    for (int peer = 0; peer < nranks; ++peer) {
        std::fill_n(send_matrix.begin() + send_offsets[peer], send_counts[peer], fill_byte(rank, peer));
    }

    std::vector<double> spillway_seconds;
    std::vector<double> alltoallv_seconds;
    bool intact = true;
    {
        comm::MpiCommunicator communicator(MPI_COMM_WORLD, resource);
        for (int iteration = 0; iteration <= iterations; ++iteration) {
            // The payloads are made before the clock starts, as the matrix is.
            std::vector<memory::Buffer> payloads;
            for (int peer = 0; peer < nranks; ++peer) {
                auto const size = pair_bytes(rank, peer, per_pair);
                auto reservation = resource.reserve(memory::MemoryType::HOST, size, memory::AllowOverbooking::no);
                payloads.push_back(resource.make_buffer(size, reservation));
                std::fill_n(payloads.back().data().begin(), size, fill_byte(rank, peer));
            }
            std::vector<comm::Message> received;
            spillway_seconds.push_back(bench::slowest_seconds([&] {
                std::vector<comm::Future<void>> sends;
                for (int offset = 0; offset < nranks; ++offset) {
                    auto const peer = (rank + offset) % nranks;
                    sends.push_back(communicator.send(peer, tag, {}, std::move(payloads[peer])));
                }
                std::vector<comm::Future<comm::Message>> receives;
                while (static_cast<int>(receives.size()) < nranks) {
                    auto incoming = communicator.probe(tag);
                    if (!incoming) {
                        std::this_thread::yield();
                        continue;
                    }
                    auto reservation = resource.reserve(
                        memory::MemoryType::HOST, *incoming->payload_size(), memory::AllowOverbooking::no
                    );
                    receives.push_back(communicator.receive(std::move(*incoming), reservation));
                }
                for (auto& receive : receives) {
                    received.push_back(receive.get());
                }
                for (auto& send : sends) {
                    send.get();
                }
            }));
            for (auto const& message : received) {
                auto const bytes = message.payload->data();
                intact &= bytes.size() == pair_bytes(message.source, rank, per_pair)
                          && std::all_of(bytes.begin(), bytes.end(), [&](std::byte b) {
                                 return b == fill_byte(message.source, rank);
                             });
            }
            alltoallv_seconds.push_back(bench::slowest_seconds([&] {
                MPI_Alltoallv(send_matrix.data(), send_counts.data(), send_offsets.data(), MPI_BYTE,
                              receive_matrix.data(), receive_counts.data(), receive_offsets.data(), MPI_BYTE,
                              MPI_COMM_WORLD);
            }));
        }
    }
    for (int peer = 0; peer < nranks; ++peer) {
        intact &= std::all_of(
            receive_matrix.begin() + receive_offsets[peer],
            receive_matrix.begin() + receive_offsets[peer] + receive_counts[peer],
            [&](std::byte b) { return b == fill_byte(peer, rank); }
        );
    }
    int all_intact = intact ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &all_intact, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

    if (rank == 0) {
        double total_bytes = 0;
        for (int from = 0; from < nranks; ++from) {
            for (int to = 0; to < nranks; ++to) {
                total_bytes += static_cast<double>(pair_bytes(from, to, per_pair));
            }
        }
        std::cout << "first iteration, not counted: spillway " << spillway_seconds.front() * 1e3
                  << " ms, MPI_Alltoallv " << alltoallv_seconds.front() * 1e3 << " ms\n";
        auto const spillway = bench::median({spillway_seconds.begin() + 1, spillway_seconds.end()});
        auto const alltoallv = bench::median({alltoallv_seconds.begin() + 1, alltoallv_seconds.end()});
        std::cout << nranks << " ranks, " << total_bytes / (1 << 20) << " MiB per exchange, " << iterations
                  << " iterations after it (median): spillway " << spillway * 1e3 << " ms ("
                  << total_bytes / spillway / (1 << 30) << " GiB/s), MPI_Alltoallv " << alltoallv * 1e3
                  << " ms (" << total_bytes / alltoallv / (1 << 30) << " GiB/s)\n";
        if (all_intact == 0) {
            std::cerr << "spillway_bench_mpi_alltoall: received bytes differ from those sent\n";
            return 1;
        }
        bench::metric("mpi_alltoall_vs_alltoallv", alltoallv / spillway, "ratio");
    }
    return all_intact == 0 ? 1 : 0;
}
