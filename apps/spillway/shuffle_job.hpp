#pragma once
/// @file
/// `spillway shuffle`: every rank generates its part of a TPC-H lineitem
/// table, the ranks shuffle it by key under a memory limit, and every rank
/// verifies what it received.

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include <spillway/comm/communicator.hpp>
#include <spillway/core/options.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/shuffle/partition_owner.hpp>
#include <spillway/shuffle/shuffle_config.hpp>
#include <spillway/table/tpch_generator.hpp>

#include "job.hpp"
#include "rank_group.hpp"
#include "shuffle_check.hpp"

namespace spillway::cli {

/// Shuffles generated lineitem rows by `l_orderkey` between the ranks of a
/// `RankGroup` and verifies the result.
///
/// Rank r of n generates chunks r, r + n, ... of `table::TpchGenerator(scale,
/// seed)` through a `seq_join` on the process's thread pool; each item
/// computes the partition of each row of its chunk. The rank hands the chunks
/// to a `table_shuffle::ChunkCoalescer`, which packs each partition's rows of
/// several chunks into one buffer reserved (spilling if need be) from the
/// rank's buffer resource, holding at most 16 KiB of chunks per partition and
/// what the limit leaves beside the window's work items, the packing of what
/// it holds, and the bookkeeping of the chunks each rank receives (many
/// partitions would cut each chunk into pieces of a few KiB, and each piece
/// received keeps `shuffle::Shuffler::bytes_per_chunk` in memory), and inserts
/// what it packs into a `shuffle::Shuffler`. Then it
/// extracts its partitions chunk by chunk as they complete, and a second
/// `seq_join` unpacks each chunk and checks it (`ShuffleCheck`). Finally an
/// `shuffle::AllGather` gives every rank every rank's results, and each
/// checks that the rows' count and checksum equal the input's and no row is
/// misplaced, so every rank agrees on the verdict.
///
/// Defaults: 4 in-process ranks, scale 1.3 (about 1 GiB in memory), 4
/// partitions per rank, a HOST limit of 512 MiB for the process (small
/// enough that most of the data is spilled), 2 chunks in flight per thread.
///
/// Options read: `ranks`, `comm`, `scale`, `seed`, `partitions`, `threads`,
/// `window`, the memory options (`memory_limit_host`, `spill_directory`,
/// `spill_codec`, ...), the shuffle options and `comm_mpi_*`.
class ShuffleJob final : public Job {
  public:
    /// The HOST limit of the process unless `memory_limit_host` is set.
    static constexpr std::uint64_t default_memory_limit = std::uint64_t{512} << 20;

    /// Checks the options, makes the ranks' buffer resources, and checks
    /// that the memory limit holds what each rank needs to progress (the
    /// packed pieces of the chunks in its window, measured on chunk 0).
    /// @throws InvalidArgument naming what is wrong, or naming the least
    ///         memory limit that works; IoError if a spill directory cannot
    ///         be made.
    explicit ShuffleJob(Options const& options);

    [[nodiscard]] RunSummary run(Progress& progress) override;

  private:
    /// What one rank found, in the form the ranks exchange.
    struct RankResult {
        ShuffleCheck check;
        table::TableChecksum input;
        std::uint64_t bytes = 0;  ///< of the tables it generated
        RankMemoryFigures memory;
        double generate_seconds = 0;  ///< generating, packing and inserting
        double exchange_seconds = 0;  ///< waiting for the first complete partition
        double verify_seconds = 0;    ///< extracting, unpacking and checking
    };

    /// One rank's part; returns what every rank found. Calls `start_verify`
    /// when its first partition is complete.
    [[nodiscard]] std::vector<RankResult> run_rank(comm::Communicator& communicator, Progress& progress,
                                                   std::function<void()> const& start_verify);

    table::TpchGenerator generator_;
    RankGroup ranks_;
    exec::ThreadPool pool_;
    shuffle::PartitionId partitions_;
    std::size_t window_;
    /// The most each rank's coalescer holds.
    std::size_t coalesce_bytes_ = 0;
    shuffle::ShuffleConfig shuffle_config_;
    /// How long a join's window may make no progress before it is reported
    /// (option `seq_join_stall_timeout`; 0: never).
    std::chrono::nanoseconds stall_timeout_{};
};

}  // namespace spillway::cli
