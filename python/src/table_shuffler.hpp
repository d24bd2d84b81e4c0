#pragma once
/// @file
/// One rank's part of a shuffle of tables by key columns: the Python
/// package's `Shuffler`, and each in-process rank of `spillway.shuffle`.

#include <optional>
#include <string>
#include <vector>

#include <spillway/comm/communicator.hpp>
#include <spillway/core/mutex.hpp>
#include <spillway/io/table_file.hpp>
#include <spillway/memory/memory_reservation.hpp>
#include <spillway/shuffle/shuffle_config.hpp>
#include <spillway/shuffle/shuffler.hpp>
#include <spillway/table/schema.hpp>
#include <spillway/table/table.hpp>
#include <spillway/table_shuffle/chunk_coalescer.hpp>

namespace spillway::python {

/// A `shuffle::Shuffler` of tables: `insert` splits a table's rows by the
/// hash of its key columns, and `extract` returns a partition's rows, from
/// every rank, as one table. Every rank must insert tables of one schema.
///
/// Small tables are not sent as they come: split into many partitions, each
/// would become pieces of a few bytes, and a shuffle's cost and bookkeeping
/// per chunk would outgrow their rows. A `table_shuffle::ChunkCoalescer`
/// holds them until they fill a budget of 16 KiB per partition, at most an
/// eighth of the rank's HOST limit, and packs them together; a table larger
/// than that is packed at once. The tables it holds are charged to the
/// rank's HOST tier while it holds them; a larger table, converted from the
/// caller's batch, is not, as it is freed within the call that packs it.
/// Charging and packing wait for memory rather than overbook
/// (`BufferResource::reserve_or_wait`).
///
/// Thread safety: every member function may be called concurrently; inserts
/// read and split their tables side by side, and hold and pack them one at
/// a time.
/// Lifetime: the communicator and its buffer resource outlive it.
class TableShuffler {
  public:
    /// Starts this rank's part of shuffle `op_id` into `partitions`
    /// partitions by the columns named `keys`, configured by `config`.
    /// @throws InvalidArgument if `keys` is empty, and as
    ///         `shuffle::Shuffler`'s constructor does (`partitions` is 0, say).
    TableShuffler(comm::Communicator& communicator, shuffle::OpId op_id, std::vector<std::string> keys,
                  shuffle::PartitionId partitions, shuffle::ShuffleConfig const& config);

    /// Checks that tables of `schema` may be inserted (as `insert` does,
    /// before any table is read), and returns the indices of the key
    /// columns. The first schema seen is the shuffle's on this rank.
    /// @throws InvalidArgument if a key is not a column of `schema`, or it
    ///         differs from the schema seen before.
    std::vector<std::size_t> expect_schema(table::Schema const& schema);

    /// Reads the next table of `reader` and inserts its rows. Returns false,
    /// inserting nothing, at the end of the reader's tables. A table read
    /// and then refused (by an exception below) is not inserted.
    /// @throws InvalidArgument if a key is not a column of the reader's
    ///         schema, or it differs from the tables inserted before; as
    ///         `reader.read` and `shuffle::Shuffler::insert` do.
    /// @throws OutOfMemory if the rows held do not fit the HOST limit.
    bool insert_next(io::TableFileReader& reader);

    /// Inserts every table of `reader` (`insert_next` until it ends).
    /// @throws as `insert_next` does.
    void insert(io::TableFileReader& reader);

    /// Sends the rows still held, and ends this rank's input
    /// (`shuffle::Shuffler::insert_finished`).
    /// @throws as `insert_next` does while sending.
    void insert_finished();

    /// Frees the rows held for sending, unsent: for a shuffle closed before
    /// its input ended, whose `insert_finished` then has nothing to pack.
    void discard_held() noexcept;

    /// See `shuffle::Shuffler::end_early_quietly`: Python's close is the
    /// caller's choice, not a fault to warn of.
    void end_early_quietly() noexcept { shuffler_.end_early_quietly(); }

    /// The partitions this rank owns, in increasing order.
    [[nodiscard]] std::vector<shuffle::PartitionId> const& local_partitions() const noexcept {
        return shuffler_.local_partitions();
    }

    /// Waits for `partition`, which this rank owns, and returns its rows as
    /// one table: with no rows if no rank inserted rows for it and this rank
    /// inserted a table, whose schema it takes; else nothing. A partition
    /// is extracted once.
    /// @throws InvalidArgument if this rank does not own it, or it was
    ///         extracted before; if its rows' schema differs from this rank's
    ///         tables' or, where it inserted none, from those of the
    ///         partitions extracted before (another rank inserted another
    ///         schema); the shuffle's error if it failed.
    [[nodiscard]] std::optional<table::Table> extract(shuffle::PartitionId partition);

    /// The schema of the tables inserted on this rank, if any were.
    [[nodiscard]] std::optional<table::Schema> schema() const;

  private:
    /// Checks that the rows of `partition`, of `schema`, are of this rank's
    /// schema or, where it inserted none, of the first partition's it
    /// extracted.
    /// @throws InvalidArgument naming both schemas if they differ.
    void expect_received_schema(shuffle::PartitionId partition, table::Schema const& schema);

    comm::Communicator& communicator_;
    std::vector<std::string> const keys_;
    shuffle::Shuffler shuffler_;

    mutable Mutex mutex_;
    /// The schema of the first table inserted, and its key columns' indices.
    std::optional<table::Schema> schema_ SPILLWAY_GUARDED_BY(mutex_);
    std::vector<std::size_t> key_columns_ SPILLWAY_GUARDED_BY(mutex_);
    /// Where no table was inserted: the schema of the first partition extracted with rows.
    std::optional<table::Schema> received_schema_ SPILLWAY_GUARDED_BY(mutex_);

    /// The bytes of tables the coalescer holds before it packs them (see the class comment).
    std::size_t const coalescer_budget_;
    /// Held by one insert at a time while it holds and packs; never together with `mutex_`.
    Mutex coalescer_mutex_;
    table_shuffle::ChunkCoalescer coalescer_ SPILLWAY_GUARDED_BY(coalescer_mutex_);
    /// What the tables the coalescer holds are charged, one reservation each.
    std::vector<memory::MemoryReservation> held_charges_ SPILLWAY_GUARDED_BY(coalescer_mutex_);
};

}  // namespace spillway::python
