#pragma once
/// @file
/// Packs the rows of many small tables by partition at once, so that a
/// shuffle into many partitions moves fewer, larger chunks.

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include <spillway/memory/bookkeeping_reservation.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/shuffle/packed_data.hpp>
#include <spillway/shuffle/partition_owner.hpp>
#include <spillway/table/table.hpp>

namespace spillway::table_shuffle {

/// Holds tables with the partition of each of their rows, and packs each
/// partition's rows of all of them into one chunk once they are worth it.
///
/// Split into many partitions, a table becomes pieces of a few KiB each, and
/// everything a shuffle does per chunk (storing, sending, spilling, reading
/// back, unpacking) then costs more than moving its bytes. In place of
/// `hash_partition_and_pack`, a coalescer trades memory for fewer chunks:
///
/// ```cpp
/// table_shuffle::ChunkCoalescer coalescer(resource, partitions, budget);
/// for (auto& table : tables) {
///     auto partition_of_row = table::partition_rows(table, keys, partitions);
///     shuffler.insert(coalescer.add(std::move(table), std::move(partition_of_row)));
/// }
/// shuffler.insert(coalescer.flush());
/// shuffler.insert_finished();
/// ```
///
/// What it hands on, and when: it holds the tables it is given while they
/// take at most `budget_bytes` (`Table::byte_size`); the table that passes
/// the budget, and `flush`, make it pack every partition's rows of all the
/// tables it holds (`table::PackedGather`), one chunk per partition with
/// rows, and hand them all on. So in a steady stream of tables of B bytes,
/// spread evenly over P partitions, chunks hold about
/// `(budget_bytes + B) / P` bytes, each byte is copied once, and no piece is
/// ever made and merged.
///
/// A partition's rows go on in the order they were added, so a shuffler
/// hands out the same rows in the same order as it would without the
/// coalescer, in fewer chunks.
///
/// Memory: the tables held count where their storage came from (a table
/// made under a `memory::ScopedHostResource` of `resource` counts against its
/// HOST limit); the partition ids and the coalescer's index are counted in
/// `resource`'s HOST tier (`memory::BookkeepingReservation`). The chunks are
/// HOST buffers of `resource`, reserved with `reserve_or_wait` while the
/// tables are still held: packing holds about twice what is held.
///
/// Thread safety: none; one thread at a time, as with a shuffler's inserts.
/// Lifetime: the resource must outlive the coalescer; destroying it frees
/// the tables it holds.
class ChunkCoalescer {
  public:
    /// The budget per partition, times the partitions, that shuffles give a
    /// coalescer unless their limit leaves less: chunks of about 16 KiB of
    /// rows. More made larger chunks, but over MPI a process's resident set
    /// then grew past its bound with memory no limit counts.
    static constexpr std::size_t bytes_per_partition = std::size_t{16} << 10;

    /// Chunks by partition, as `Shuffler::insert` takes them.
    using Chunks = std::unordered_map<shuffle::PartitionId, shuffle::PackedData>;

    /// A coalescer of tables split into `partitions`, holding at most about
    /// `budget_bytes` of them (0: none, every table is packed as it comes).
    /// @throws InvalidArgument if `partitions` is 0.
    ChunkCoalescer(memory::BufferResource& resource, shuffle::PartitionId partitions, std::size_t budget_bytes);
    ChunkCoalescer(ChunkCoalescer const&) = delete;
    ChunkCoalescer& operator=(ChunkCoalescer const&) = delete;

    /// Takes `table`, whose row `r` goes to partition `partition_of_row[r]`
    /// (`table::partition_rows`), and returns the chunks ready to go on, as
    /// the class comment says: none, or every partition's rows of every
    /// table held.
    /// @throws InvalidArgument, taking nothing, if `partition_of_row` does
    ///         not hold one id per row, an id is out of range, or the
    ///         table's schema differs from the tables held.
    /// @throws InvalidArgument or OutOfMemory as packing does (a piece's
    ///         strings past `Column::max_characters`, `reserve_or_wait`); the
    ///         coalescer then holds `table` too, and every table before it.
    [[nodiscard]] Chunks add(table::Table table, std::vector<std::uint32_t> partition_of_row);

    /// Every partition's rows of every table held, packed; the coalescer is
    /// empty after.
    /// @throws as packing in `add` does, and then holds what it held.
    [[nodiscard]] Chunks flush();

    /// Frees the tables held, unpacked: for a shuffle that ends without
    /// them (its input failed, or it was closed before its end).
    void discard() noexcept;

    /// The bytes of the tables held (`Table::byte_size`).
    [[nodiscard]] std::size_t held_bytes() const noexcept { return held_bytes_; }

  private:
    /// Packs every table held; empties the coalescer once all is packed.
    [[nodiscard]] Chunks pack_held();
    /// Counts the HOST memory held beside the tables' storage.
    void count_bookkeeping() noexcept;

    memory::BufferResource& resource_;
    shuffle::PartitionId const partitions_;
    std::size_t const budget_bytes_;
    std::vector<table::Table> tables_;
    std::vector<std::vector<std::uint32_t>> partition_of_row_;  ///< by table
    std::size_t held_bytes_ = 0;
    memory::BookkeepingReservation bookkeeping_;
};

}  // namespace spillway::table_shuffle
