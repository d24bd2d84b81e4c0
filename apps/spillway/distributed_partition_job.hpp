#pragma once
/// @file
/// `spillway partition --ranks N` and `--comm mpi`: a repartition of files by
/// ranks that each read a share of the input, shuffle the rows by key, and
/// write and verify the partitions they own.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <spillway/comm/communicator.hpp>
#include <spillway/core/options.hpp>
#include <spillway/exec/thread_pool.hpp>
#include <spillway/io/file_format.hpp>
#include <spillway/io/table_file.hpp>
#include <spillway/memory/memory_config.hpp>
#include <spillway/shuffle/partition_owner.hpp>
#include <spillway/shuffle/shuffle_config.hpp>
#include <spillway/table/table_checksum.hpp>

#include "job.hpp"
#include "partition_input.hpp"
#include "partition_job.hpp"
#include "rank_group.hpp"
#include "staged_output.hpp"

namespace spillway::cli {

/// Whether `options` ask for a job on several ranks or over MPI (`ranks`
/// above 1, or `comm` = `mpi`): `spillway partition` is then a
/// `DistributedPartitionJob`.
[[nodiscard]] bool runs_on_ranks(Options const& options);

/// The memory configuration of a `DistributedPartitionJob`'s ranks: that of
/// `options`, with, unless option `spill_headroom` is set, a headroom of an
/// eighth of each in-process rank's share of the HOST limit (one rank per
/// process over MPI).
/// @throws InvalidArgument if a memory option, `comm` or `ranks` is malformed.
[[nodiscard]] memory::MemoryConfig partition_memory_config(Options const& options);

/// Splits the rows of the input files into `partitions` files by the hash of
/// their key columns, as `TablePartitionJob` does, on the ranks of a
/// `RankGroup`: in-process ranks (`comm` = `local`) or the processes of an
/// MPI job (`comm` = `mpi`).
///
/// - **Reading.** Each rank reads its share of the input
///   (`PartitionInput::source`): CSV and Arrow IPC files whole, dealt out in
///   turn, and Parquet files by row group, so one large Parquet file is
///   read by every rank. A rank whose share is empty reads nothing.
/// - **Shuffling.** Workers parse or take each table, hash-partition it and
///   pack the pieces (`table_shuffle::hash_partition_and_pack`, waiting for
///   memory rather than overbooking), and the rank inserts them into a
///   `shuffle::Shuffler`, whose chunks spill to disk when the rank's HOST
///   limit is reached. Partition `p` belongs to rank `p mod ranks`.
/// - **Writing.** As its partitions complete, a rank unpacks each one's
///   chunks a batch at a time and appends them to the partition's file, one
///   file open per rank. Within a file, rows of one input table stay
///   together and in order; the tables come in no particular order.
/// - **Verifying.** Each rank reads its files back (`check_partition_tables`);
///   the ranks then exchange what they read and wrote, and every rank
///   checks that no row is in a file of another partition and that the row
///   count and checksum of all columns (`table::TableChecksum`) of the
///   output equal the input's.
///
/// The files are those of `TablePartitionJob`: `part-NNNNN.<format>` in the
/// output directory (CSV from CSV input: `csv_partition_extension`), in
/// the first input's column order, zstd-compressed Parquet unless told
/// otherwise. CSV output is written from the parsed values, not copied
/// verbatim: numbers in their shortest form, a header of the column names
/// if the input has one. Every rank writes into the staging
/// directory (`StagedOutput`) of rank 0's process, which moves the files
/// into the output directory when verification passes: over MPI, the output
/// directory must be one that every process reaches at the same path.
///
/// Memory: the HOST limit is the process's: a fixed allowance for the
/// program, and an equal share for each of its ranks. A rank's buffer
/// resource gets its share less what its file reader (its pages and
/// buffers, `PartitionInput::reader_bytes`, and one batch) and its file
/// writer (the write buffer and the writer's own) hold in the Arrow
/// library's memory, which no resource counts. Within the resource, a rank
/// holds outside its spillable chunks at most `3 * window + 1` input
/// tables' worth of rows while reading (a table, its parse, its packed
/// pieces), or while writing `window + 1` batches of received chunks, each
/// packed and unpacked (a batch passes its size by at most one table), and
/// keeps one table's worth of room for chunks. Its shuffler keeps the state
/// of each partition it owns, and a record of each chunk it holds
/// (`Shuffler::bytes_per_chunk`) until the chunk is taken out: one of every
/// input table for each partition it owns, and those of its tables in
/// flight (which assumes its sends keep up with its reads). So small input
/// pieces split many ways cost memory too. Unless told the window, the
/// job takes the largest up to 2 per thread (shared by the process's ranks)
/// that fits; a limit that does not fit a window of 1 fails at once, naming
/// the least limit that works. Unless option `spill_headroom` says
/// otherwise, each rank's spill thread keeps an eighth of the rank's share
/// of the limit free: a partition that outgrows its limit sends nearly all
/// of its rows to disk anyway, and the room lets the rank's resource reuse
/// the blocks that one batch frees for the next, rather than have the
/// system fault in and zero new pages for each.
///
/// Options read: `ranks`, `comm`, `partitions`, `threads`, `window`, the
/// memory options, the shuffle options, `comm_mpi_*` and the `csv_*`
/// options, and the arguments' formats and compression.
class DistributedPartitionJob final : public Job {
  public:
    /// What the program takes besides what the plan counts.
    static constexpr std::uint64_t fixed_bytes = std::uint64_t{32} << 20;

    /// Checks the arguments and options, opens the inputs (every process
    /// checks all of them), plans the memory, makes the ranks' buffer
    /// resources, and, in rank 0's process, creates the output directory
    /// and its staging directory.
    /// @throws InvalidArgument, IoError or CorruptData naming what is wrong
    ///         (see `PartitionInput`, `RankGroup` and `StagedOutput`), or
    ///         naming the least memory limit that works.
    DistributedPartitionJob(PartitionArguments arguments, Options const& options);

    [[nodiscard]] RunSummary run(Progress& progress) override;
    void commit() override;

  private:
    /// What one rank found, in the form the ranks exchange.
    struct RankResult {
        table::TableChecksum input;
        table::TableChecksum output;  ///< of the rows read back from its files
        std::uint64_t misplaced_rows = 0;
        std::uint64_t skipped_rows = 0;
        RankMemoryFigures memory;
        double partition_seconds = 0;  ///< reading, packing and inserting
        double write_seconds = 0;      ///< waiting for partitions, unpacking and writing them
        double verify_seconds = 0;     ///< reading its files back
    };

    /// One rank's part; returns what every rank found, by rank, and sets
    /// `first_misplaced` to where this rank found its first misplaced row.
    /// Calls `start_write` when its first partition is complete.
    [[nodiscard]] std::vector<RankResult> run_rank(comm::Communicator& communicator, Progress& progress,
                                                   std::function<void()> const& start_write,
                                                   std::string& first_misplaced);

    PartitionInput input_;
    io::FileFormat output_format_;
    std::string extension_;  ///< of the partition files
    std::string compression_;
    std::filesystem::path output_;
    std::vector<std::string> key_names_;
    RankGroup ranks_;
    exec::ThreadPool pool_;
    shuffle::PartitionId partitions_;
    shuffle::ShuffleConfig shuffle_config_;
    std::uint64_t limit_ = 0;  ///< the process's HOST limit
    std::size_t window_ = 0;   ///< tables in flight per rank
    std::uint64_t bound_ = 0;  ///< the most memory the plan takes
    std::uint64_t receive_batch_bytes_ = 0;  ///< of received chunks unpacked and written as one table
    io::WriteOptions write_options_;
    bool verified_ = false;  ///< whether `run` verified the output
    std::optional<StagedOutput> staged_output_;  ///< in the process of rank 0
    /// How long a join's window may make no progress before it is reported
    /// (option `seq_join_stall_timeout`; 0: never).
    std::chrono::nanoseconds stall_timeout_{};
};

}  // namespace spillway::cli
