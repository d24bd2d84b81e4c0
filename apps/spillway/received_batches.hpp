#pragma once
/// @file
/// A rank's partitions of a shuffle as they complete, a batch of chunks at a
/// time: the source of the `seq_join` that unpacks what a rank received.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <spillway/shuffle/packed_data.hpp>
#include <spillway/shuffle/partition_owner.hpp>
#include <spillway/shuffle/shuffler.hpp>

namespace spillway::cli {

/// Received chunks of one partition, handled together.
struct ReceivedChunks {
    shuffle::PartitionId partition;
    std::vector<shuffle::PackedData> chunks;
};

/// A generator function for `seq_join` of this rank's partitions of a
/// shuffler, in the order they complete (`wait_any`), each as batches of its
/// chunks (`extract_chunk`) of at least `batch_bytes` bytes, but the last:
/// so only the window's batches are in memory at once, and many small chunks
/// are handled as one. A batch passes `batch_bytes` by at most one chunk.
///
/// Thread safety: externally synchronized (seq_join pulls from one thread at
/// a time). Lifetime: the shuffler outlives it.
class ReceivedBatches {
  public:
    /// What to do with a partition that received no chunk.
    enum class EmptyPartitions : bool {
        skip,  ///< nothing comes of it
        yield, ///< one batch without chunks
    };

    /// Called after each `wait_any` with what it returned: a partition that
    /// just completed, or nothing once every one has.
    using Waited = std::function<void(std::optional<shuffle::PartitionId>)>;

    ReceivedBatches(shuffle::Shuffler& shuffler, std::uint64_t batch_bytes, EmptyPartitions empty, Waited waited);

    /// The next batch, or nothing once every partition has been handed out.
    /// @throws as `Shuffler::wait_any` and `extract_chunk` do.
    std::optional<ReceivedChunks> operator()();

  private:
    shuffle::Shuffler* shuffler_;
    std::uint64_t batch_bytes_;
    EmptyPartitions empty_;
    Waited waited_;
    std::optional<shuffle::PartitionId> current_;  ///< the partition being handed out
    bool current_started_ = false;                 ///< whether a batch of it was handed out
    /// The most chunks a batch had so far: each new batch makes room for as
    /// many at once rather than growing a chunk at a time.
    std::size_t most_batch_chunks_ = 0;
};

}  // namespace spillway::cli
