#pragma once
/// @file
/// Merges the small pieces that many partitions cut tables into, so that a
/// shuffle moves fewer, larger chunks.

#include <cstddef>
#include <span>
#include <unordered_map>
#include <vector>

#include <spillway/memory/bookkeeping_reservation.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/shuffle/packed_data.hpp>
#include <spillway/shuffle/partition_owner.hpp>

namespace spillway::table_shuffle {

/// Holds the packed pieces of consecutive tables by partition and hands them
/// on merged, one chunk per partition, once they are large enough.
///
/// Split into many partitions, a table becomes pieces of a few KiB each, and
/// everything a shuffle does per chunk (storing, sending, spilling, reading
/// back, unpacking) then costs more than moving its bytes. Between
/// `hash_partition_and_pack` and `Shuffler::insert`, a coalescer trades
/// memory for fewer chunks:
///
/// ```cpp
/// table_shuffle::ChunkCoalescer coalescer(resource, budget);
/// for (auto const& table : tables) {
///     shuffler.insert(coalescer.add(table_shuffle::hash_partition_and_pack(table, keys, partitions, resource)));
/// }
/// shuffler.insert(coalescer.flush());
/// shuffler.insert_finished();
/// ```
///
/// What it hands on, and when:
/// - A piece of at least `target_bytes` for a partition of which nothing is
///   held goes on at once, as it is.
/// - Otherwise the piece is held, and once a partition's held pieces reach
///   `target_bytes` they go on merged into one chunk (`pack_concatenated`:
///   the tables they hold, concatenated, in a HOST buffer reserved with
///   `reserve_or_wait`). The pieces are taken to be packed in this process
///   and kept in its memory since, as `hash_partition_and_pack` makes them:
///   their payloads' checksums are not checked again
///   (`table::PayloadChecksum::trust`); everything else is.
/// - When the held pieces pass `budget_bytes` in all, every partition goes
///   on, so that in a steady stream of tables spread evenly over P
///   partitions, chunks hold about `budget_bytes / P` bytes. Letting all go
///   at once, rather than the partitions holding the most, frees pieces
///   that were allocated together (those of one table) together: pieces
///   kept alive among freed ones pin the pages around them, and in a
///   shuffle into 1000 partitions that left the C library's heap with tens
///   of MiB it could neither use nor return.
/// - `flush` hands on everything held.
///
/// A partition's rows go on in the order they were added, so a shuffler
/// hands out the same rows in the same order as it would without the
/// coalescer, in fewer chunks.
///
/// Memory: the pieces held are buffers of `resource`, counted where they
/// were reserved; their metadata and the coalescer's index are counted in
/// its HOST tier too (`memory::BookkeepingReservation`). Merging a
/// partition holds its pieces and the merged chunk at once, about twice its
/// held bytes.
///
/// Thread safety: none; one thread at a time, as with a shuffler's inserts.
/// Lifetime: the resource must outlive the coalescer; destroying it frees
/// the pieces it holds.
class ChunkCoalescer {
  public:
    /// Chunks by partition, as `hash_partition_and_pack` makes them and
    /// `Shuffler::insert` takes them.
    using Chunks = std::unordered_map<shuffle::PartitionId, shuffle::PackedData>;

    /// The chunk size from which a shuffle's cost per chunk is small beside
    /// its cost per byte.
    static constexpr std::size_t default_target_bytes = std::size_t{64} << 10;

    /// A coalescer holding at most about `budget_bytes` of pieces (0: none,
    /// every piece goes on at once) and merging a partition's pieces once
    /// they reach `target_bytes`.
    explicit ChunkCoalescer(memory::BufferResource& resource, std::size_t budget_bytes,
                            std::size_t target_bytes = default_target_bytes);
    ChunkCoalescer(ChunkCoalescer const&) = delete;
    ChunkCoalescer& operator=(ChunkCoalescer const&) = delete;

    /// Takes `pieces`, packed tables by partition (`hash_partition_and_pack`),
    /// and returns the chunks ready to go on, as the class comment says.
    /// @throws InvalidArgument, taking nothing, if a piece's buffer is not
    ///         a HOST buffer of the coalescer's resource.
    /// @throws CorruptData, InvalidArgument or OutOfMemory as
    ///         `pack_concatenated` does for the pieces of one partition. The
    ///         coalescer then holds every piece it was given and has not
    ///         returned, some of them merged already.
    [[nodiscard]] Chunks add(Chunks pieces);

    /// Everything held, merged by partition; the coalescer is empty after.
    /// @throws as `add` does, and then holds what it held.
    [[nodiscard]] Chunks flush();

    /// The payload bytes of the pieces held.
    [[nodiscard]] std::size_t held_bytes() const noexcept { return held_bytes_; }

  private:
    /// The pieces of one partition, in the order they were added.
    struct Held {
        std::vector<shuffle::PackedData> pieces;
        std::size_t bytes = 0;  ///< payload bytes
    };

    /// Holds `piece` after those of `partition` already held.
    void hold(shuffle::PartitionId partition, shuffle::PackedData&& piece);
    /// The partitions to hand on: those at `target_bytes` or more, or, past
    /// the budget, all.
    [[nodiscard]] std::vector<shuffle::PartitionId> ready_partitions() const;
    /// Merges the pieces of each of `partitions` into one, in place, then
    /// takes them out.
    [[nodiscard]] Chunks take(std::span<shuffle::PartitionId const> partitions);
    /// Counts the HOST memory held beside the pieces' buffers.
    void count_bookkeeping() noexcept;

    memory::BufferResource& resource_;
    std::size_t const budget_bytes_;
    std::size_t const target_bytes_;
    std::unordered_map<shuffle::PartitionId, Held> held_;
    std::size_t held_bytes_ = 0;
    std::size_t held_pieces_ = 0;
    std::size_t held_metadata_bytes_ = 0;
    memory::BookkeepingReservation bookkeeping_;
};

}  // namespace spillway::table_shuffle
