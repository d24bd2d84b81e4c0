#pragma once
/// @file
/// How `spillway partition` divides its memory limit, and the smallest limit
/// it can work in.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

namespace spillway::cli {

/// The memory of a repartition of CSV files, which holds:
/// - the reader's buffer: one block;
/// - each block in the window: its text while it waits for a thread; while a
///   thread works on it, its text, its parsed keys and row offsets (at most
///   one block's size for rows of 24 bytes or more) and its rows split by
///   partition (one block); once done, only the split rows (one block);
/// - the split rows of the block being written (one block), which has left
///   the window;
/// - one write buffer per partition file, and what the file's writer holds
///   besides (`file_overhead_bytes`: a Parquet writer's metadata);
/// - what a writer takes while it writes its buffer out, besides it
///   (`flush_bytes`: a Parquet writer encodes the rows it holds into a row
///   group), for at most one writer per working thread and one more (the
///   thread that closes the files works too);
/// - what the input file's reader holds besides the tables it returns
///   (`reader_bytes`: a Parquet reader's pages);
/// - a fixed allowance for the program, its libraries and thread stacks.
///
/// So with `w` blocks in flight on `t` threads it needs at most
/// `fixed + reader + block * (2 + w + 2 * min(t, w)) + partitions * (write_buffer + file_overhead)
///  + (min(t, w) + 1) * flush`.
/// The window should hold at least one block per thread, or a thread would
/// idle; unless told the window, the plan takes the largest one up to
/// `4 * threads` that fits without shrinking the write buffers, and fewer
/// than one per thread, down to one block, only where no more fit. These take a
/// quarter of the limit, within the writers' bounds, or what the rest leaves
/// them where that is less, down to `smallest_write_buffer`.
///
/// Thread safety: a plain value.
struct PartitionPlan {
    /// What the program and everything not counted above take.
    static constexpr std::uint64_t fixed_bytes = std::uint64_t{32} << 20;
    /// The write buffer of each CSV partition file, before the limit shrinks it.
    static constexpr std::size_t largest_write_buffer = std::size_t{1} << 20;
    /// The open row group of each Parquet partition file, before the limit
    /// shrinks it: larger groups encode, compress and read back faster.
    static constexpr std::size_t largest_row_group = std::size_t{16} << 20;
    /// The least a write buffer is shrunk to.
    static constexpr std::size_t smallest_write_buffer = std::size_t{64} << 10;

    std::uint64_t limit = 0;
    std::uint64_t block_bytes = 0;
    std::size_t threads = 0;
    std::uint32_t partitions = 0;
    std::size_t write_buffer_bytes = 0;  ///< per partition file: a quarter of the limit, or what the rest leaves
    std::size_t window = 0;              ///< blocks in flight
    std::uint64_t file_overhead_bytes = 0;  ///< per partition file, held by its writer besides the write buffer
    std::uint64_t flush_bytes = 0;          ///< per writer writing out its buffer, besides it
    std::uint64_t reader_bytes = 0;         ///< held by the input file's reader besides its tables

    /// The most memory the plan uses.
    [[nodiscard]] std::uint64_t bound() const noexcept;

    /// Records the plan in a run's `settings`: `window`, `block_size_bytes`,
    /// `memory_limit_bytes` and `memory_bound_bytes`.
    void describe(nlohmann::ordered_json& settings) const;

    /// What each partition file's writer may buffer, holds besides, and
    /// takes while it writes its buffer out; and what the input's reader holds.
    struct Files {
        /// The most a write buffer grows to, however large the limit.
        std::uint64_t largest_buffer = largest_write_buffer;
        /// What the writer holds besides its buffer.
        std::uint64_t overhead = 0;
        /// What the writer takes while it writes out a buffer of the given
        /// size, besides it; nothing if empty.
        std::function<std::uint64_t(std::uint64_t buffer)> flush;
        /// What the input file's reader holds besides the tables it returns.
        std::uint64_t reader = 0;
        /// Whether `--block-size` sets the blocks, as for CSV input; a
        /// Parquet or Arrow file's reads are its own.
        bool sized_by_flag = true;
    };

    /// The plan for `limit` bytes, blocks of `block_bytes`, `threads` threads
    /// and `partitions` partitions, with `files` read and written; with the
    /// window `window` if given.
    /// @throws InvalidArgument naming the smallest limit that would work (and
    ///         the flags that lower it) if the limit does not hold one block
    ///         (with `window` given, one block per thread or `window` blocks,
    ///         if fewer), or naming the largest window that fits if `window`
    ///         does not fit; or if `window` is less than 1.
    [[nodiscard]] static PartitionPlan make(std::uint64_t limit, std::uint64_t block_bytes, std::size_t threads,
                                            std::uint32_t partitions, std::optional<std::size_t> window,
                                            Files const& files);
    /// `make` with CSV files: write buffers of at most
    /// `largest_write_buffer`, nothing besides.
    [[nodiscard]] static PartitionPlan make(std::uint64_t limit, std::uint64_t block_bytes, std::size_t threads,
                                            std::uint32_t partitions, std::optional<std::size_t> window);

  private:
    /// The plan for `limit` with `window` blocks in flight, fitting or not.
    [[nodiscard]] static PartitionPlan with_window(std::uint64_t limit, std::uint64_t block_bytes,
                                                   std::size_t threads, std::uint32_t partitions,
                                                   std::size_t window, Files const& files) noexcept;
};

}  // namespace spillway::cli
