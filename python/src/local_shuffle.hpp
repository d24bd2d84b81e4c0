#pragma once
/// @file
/// `spillway.shuffle`: a shuffle of tables among in-process ranks.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spillway/comm/communicator.hpp>
#include <spillway/core/options.hpp>
#include <spillway/io/table_file.hpp>
#include <spillway/memory/buffer_resource.hpp>

#include "resource_figures.hpp"
#include "table_shuffler.hpp"

namespace spillway::python {

/// A shuffle of tables into `partitions` partitions by key columns among
/// `ranks` in-process ranks (`comm::LocalCommunicator`), each with a buffer
/// resource of its own that holds an equal share of the HOST limit and
/// spills to its own directory. The tables inserted go to the ranks in turn;
/// partitions are owned round-robin and extracted in any order, once each.
///
/// Use: `insert` any number of times, then `finish`, then `extract`. `close`
/// (or the destructor) frees everything, spill files included.
///
/// Thread safety: externally synchronized.
class LocalShuffle {
  public:
    /// Makes the ranks and their resources: the memory options of `options`
    /// (`memory::MemoryConfig::from_options`, with the HOST limit shared
    /// among the ranks) and the shuffle options (`ShuffleConfig`).
    /// @throws InvalidArgument if `ranks` is not in [1, 4096], an option is
    ///         malformed, one set in code is neither of those (a misspelt
    ///         name), or as `TableShuffler` does.
    /// @throws IoError if a spill directory cannot be made.
    LocalShuffle(std::vector<std::string> keys, std::uint32_t partitions, int ranks, Options const& options);
    ~LocalShuffle();
    LocalShuffle(LocalShuffle const&) = delete;
    LocalShuffle& operator=(LocalShuffle const&) = delete;

    /// Inserts every table `reader` gives, each into the next rank in turn,
    /// after checking its schema on every rank (`TableShuffler::expect_schema`),
    /// so that a stream of no batches sets the schema of empty partitions.
    /// @throws InvalidArgument after `finish` or `close`; as
    ///         `TableShuffler::insert_next` does.
    void insert(io::TableFileReader& reader);

    /// Ends the input of every rank.
    /// @throws InvalidArgument if called twice, or after `close`; the shuffle's error.
    void finish();

    /// The rows of `partition`: a table with the schema of the tables
    /// inserted, empty if no row went there; nothing if no table was
    /// inserted at all. Waits for the partition to complete.
    /// @throws InvalidArgument before `finish`, after `close`, for a
    ///         partition out of range or extracted before.
    [[nodiscard]] std::optional<table::Table> extract(std::uint32_t partition);

    /// The figures of the ranks' resources so far.
    /// @throws InvalidArgument after `close`.
    [[nodiscard]] ResourceFigures figures() const;

    /// Ends the shuffle, whether finished or not, and frees every chunk and
    /// spill file it holds. Idempotent.
    void close() noexcept;

  private:
    /// @throws InvalidArgument naming `action` after `close`.
    void check_open(char const* action) const;

    std::uint32_t const partitions_;
    std::vector<std::unique_ptr<memory::BufferResource>> resources_;
    std::vector<std::unique_ptr<comm::Communicator>> communicators_;
    std::vector<std::unique_ptr<TableShuffler>> shufflers_;
    std::size_t next_rank_ = 0;  ///< the rank that takes the next table
    bool finished_ = false;
    bool closed_ = false;
};

}  // namespace spillway::python
