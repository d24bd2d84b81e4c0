#pragma once
/// @file
/// What the shuffle benchmarks share, on top of the memory benchmarks'
/// support: chunks of a shuffle, in-process ranks that start together, and
/// draining a shuffler.

#include <barrier>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <unordered_map>
#include <thread>
#include <vector>

#include <spillway/comm/communicator.hpp>
#include <spillway/comm/local_communicator.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/shuffle/shuffler.hpp>

#include <memory/bench_support.hpp>

namespace spillway::bench {

/// `ranks` in-process ranks (a `LocalCommunicator` group), each with a
/// `BufferResource` of its own made from `config`.
struct LocalGroup {
    LocalGroup(comm::Rank ranks, memory::MemoryConfig const& config = {}) {
        std::vector<memory::BufferResource*> pointers;
        for (comm::Rank rank = 0; rank < ranks; ++rank) {
            resources.push_back(std::make_unique<memory::BufferResource>(config));
            pointers.push_back(resources.back().get());
        }
        communicators = comm::LocalCommunicator::make_group(pointers);
    }

    std::vector<std::unique_ptr<memory::BufferResource>> resources;
    /// Declared last: destroyed before the resources they use.
    std::vector<std::unique_ptr<comm::Communicator>> communicators;
};

/// The partition of a rank's `index`-th chunk: chunks go round the
/// partitions, starting at a different one on each rank.
inline shuffle::PartitionId partition_of(comm::Rank rank, std::uint64_t index, shuffle::PartitionId partitions) {
    return static_cast<shuffle::PartitionId>((static_cast<std::uint64_t>(rank) + index) % partitions);
}

/// The salt of a rank's `index`-th chunk, stored in its first word.
inline std::uint64_t salt_of(comm::Rank rank, std::uint64_t index) {
    return (static_cast<std::uint64_t>(rank) << 40) + index + 1;
}

/// Inserts `chunks` into `shuffler` one at a time, the `index`-th into
/// `partition_of(rank, index, ...)`, then ends the input.
inline void insert_all(shuffle::Shuffler& shuffler, comm::Rank rank, std::vector<memory::Buffer>& chunks) {
    for (std::uint64_t index = 0; index < chunks.size(); ++index) {
        std::unordered_map<shuffle::PartitionId, shuffle::PackedData> one;
        one.emplace(
            partition_of(rank, index, shuffler.total_partitions()),
            shuffle::PackedData{{}, std::move(chunks[index])}
        );
        shuffler.insert(std::move(one));
    }
    chunks.clear();
    shuffler.insert_finished();
}

/// Extracts every partition of `shuffler` as it completes, chunk by chunk,
/// checks that each chunk starts with a salt a rank can have written, and
/// returns the number of bytes extracted.
/// @throws CorruptData if a chunk does not.
inline std::uint64_t extract_all(shuffle::Shuffler& shuffler) {
    std::uint64_t bytes = 0;
    while (auto const partition = shuffler.wait_any()) {
        while (auto const chunk = shuffler.extract_chunk(*partition)) {
            std::uint64_t salt = 0;
            std::memcpy(&salt, chunk->data.data().data(), sizeof salt);
            SPILLWAY_EXPECTS(salt != 0, "a chunk of partition " << *partition << " lost its salt", CorruptData);
            bytes += chunk->data.size();
        }
    }
    return bytes;
}

/// Runs `body(rank)` on `ranks` threads that start together; returns the
/// seconds from that start until the last one returns.
/// @throws the first exception a body threw, once all have returned.
template <typename Body>
double run_ranks(comm::Rank ranks, Body body) {
    std::barrier start(ranks + 1);
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks));
    std::vector<std::thread> threads;
    for (comm::Rank rank = 0; rank < ranks; ++rank) {
        threads.emplace_back([&, rank] {
            start.arrive_and_wait();
            try {
                body(rank);
            } catch (...) {
                errors[static_cast<std::size_t>(rank)] = std::current_exception();
            }
        });
    }
    start.arrive_and_wait();
    Stopwatch const clock;
    for (auto& thread : threads) {
        thread.join();
    }
    auto const seconds = clock.seconds();
    for (auto const& error : errors) {
        if (error) {
            std::rethrow_exception(error);
        }
    }
    return seconds;
}

}  // namespace spillway::bench
