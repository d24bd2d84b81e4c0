#include "distributed_partition_job.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <span>
#include <thread>
#include <unordered_map>
#include <type_traits>

#include <spillway/core/error.hpp>
#include <spillway/exec/seq_join.hpp>
#include <spillway/memory/host_allocator.hpp>
#include <spillway/memory/memory_config.hpp>
#include <spillway/memory/system_memory.hpp>
#include <spillway/shuffle/all_gather.hpp>
#include <spillway/shuffle/shuffler.hpp>
#include <spillway/table_shuffle/packed_partitions.hpp>

#include "job_limits.hpp"
#include "partition_check.hpp"
#include "partition_files.hpp"
#include "partition_settings.hpp"
#include "partition_plan.hpp"
#include "rank_values.hpp"
#include "received_batches.hpp"
#include "seq_join_tracer.hpp"

namespace spillway::cli {
namespace {

using Clock = std::chrono::steady_clock;

/// The collectives' op ids.
constexpr shuffle::OpId staging_op = 0;
constexpr shuffle::OpId shuffle_op = 1;
constexpr shuffle::OpId results_op = 2;

/// Input tables in flight per worker thread unless `window` is set.
constexpr std::size_t tables_per_thread = 2;

/// The write buffer of a rank's open file (a Parquet row group's column
/// data), and the bytes of received chunks written as one table, for a rank
/// with `limit` bytes: fractions of it, within bounds.
struct RankBuffers {
    std::uint64_t write_buffer;
    std::uint64_t receive_batch;

    static RankBuffers for_limit(std::uint64_t limit) noexcept {
        constexpr std::uint64_t page = 4096;
        constexpr std::uint64_t kibibyte = 1024;
        return {std::clamp<std::uint64_t>(limit / 16 / page * page, PartitionPlan::smallest_write_buffer,
                                          PartitionPlan::largest_row_group),
                std::clamp<std::uint64_t>(limit / 32 / page * page, 64 * kibibyte, 4 * kibibyte * kibibyte)};
    }
};

/// The memory of one rank, of `rank_limit` bytes, with `window` tables in
/// flight, tables of `piece_bytes`, a file reader that holds `reader_bytes`
/// and a file writer of `format` for a file of `schema`, in a shuffle of
/// `pieces` input tables into `partitions`, `owned_partitions` of them the
/// rank's.
struct RankMemory {
    /// What the file reader and writer hold in the Arrow library's memory,
    /// which the rank's resource does not count: the reader's pages and the
    /// batch read before it becomes a table, the writer, and what it takes
    /// to write out its buffer.
    std::uint64_t outside;
    /// What the rank's resource holds outside its spillable chunks: while
    /// reading, each table in flight and its parse and its packed pieces,
    /// and the pieces being inserted; while writing, each batch in flight
    /// packed and unpacked, and the write buffer (the tables the writer holds).
    std::uint64_t working;
    /// Room for spillable chunks besides, so that a chunk can be inserted
    /// while the working set is at its largest: one table's worth.
    std::uint64_t chunks;
    /// The state of the partitions the rank owns, which its shuffler keeps.
    std::uint64_t partitions;
    /// What the shuffler keeps reserved for each chunk it holds
    /// (`Shuffler::bytes_per_chunk`), spilled or not, until it is taken out:
    /// a chunk of every input table for each partition the rank owns,
    /// received, and the chunks of the tables in flight, to send (which
    /// assumes that sends keep up with reads).
    std::uint64_t chunk_records;

    static RankMemory of(std::uint64_t rank_limit, std::uint64_t piece_bytes, std::uint64_t reader_bytes,
                         io::FileFormat format, table::Schema const& schema, std::size_t window,
                         std::uint64_t pieces, std::uint64_t partitions, std::uint64_t owned_partitions) noexcept {
        auto const buffers = RankBuffers::for_limit(rank_limit);
        auto const reading = piece_bytes * (3 * window + 1);
        // A batch passes its size by at most one chunk, at most one table's rows.
        auto const writing = 2 * (buffers.receive_batch + piece_bytes) * (window + 1) + buffers.write_buffer;
        return {reader_bytes + piece_bytes + io::writer_overhead_bytes(format, schema)
                    + io::writer_flush_bytes(format, buffers.write_buffer),
                std::max(reading, writing), piece_bytes, owned_partitions * shuffle::Shuffler::bytes_per_partition(),
                (pieces * owned_partitions + (window + 1) * partitions) * shuffle::Shuffler::bytes_per_chunk()};
    }

    [[nodiscard]] std::uint64_t total() const noexcept {
        return outside + working + chunks + partitions + chunk_records;
    }
    /// What grows with the partitions.
    [[nodiscard]] std::uint64_t of_partitions() const noexcept { return partitions + chunk_records; }
    /// What grows with the size of an input piece, against what shrinks
    /// with it: whether larger pieces (more bytes, fewer records) need less.
    [[nodiscard]] bool larger_pieces_need_less() const noexcept { return chunk_records > working + chunks; }
};

/// One input table, hash-partitioned and packed.
struct PackedTable {
    std::unordered_map<shuffle::PartitionId, shuffle::PackedData> pieces;
    table::TableChecksum checksum;
    std::uint64_t skipped_rows = 0;
    std::uint64_t progress = 0;
};

/// The rows of received chunks, to be written to their partition's file.
struct ReceivedTable {
    shuffle::PartitionId partition;
    std::optional<table::Table> rows;  ///< nothing for a partition that received nothing
};

/// The advice on `--block-size` for CSV input whose ranks need `memory`.
std::string block_size_advice(io::FileFormat format, RankMemory const& memory) {
    if (format != io::FileFormat::csv) {
        return "";
    }
    return memory.larger_pieces_need_less() ? ", or raise --block-size" : ", or lower --block-size";
}

}  // namespace

memory::MemoryConfig partition_memory_config(Options const& options) {
    auto config = memory::MemoryConfig::from_options(options);
    if (!options.find("spill_headroom")) {
        config.spill_headroom =
            config.host_limit.resolve(memory::host_memory_capacity()) / RankGroup::in_process_ranks(options, 1) / 8;
    }
    return config;
}

bool runs_on_ranks(Options const& options) {
    return options.get_int("ranks", 1, 1, max_ranks) > 1 || options.get_choice("comm", {"local", "mpi"}, "local") == "mpi";
}

DistributedPartitionJob::DistributedPartitionJob(PartitionArguments arguments, Options const& options)
    : input_(arguments, options),
      output_format_(output_format_of(arguments)),
      compression_(arguments.compression.empty() ? "zstd" : arguments.compression),
      output_(std::move(arguments.output)),
      key_names_(std::move(arguments.keys)),
      ranks_(options, partition_memory_config(options), 1),
      pool_(exec::ThreadPool::Config::from_options(options)),
      partitions_(static_cast<shuffle::PartitionId>(options.get_int("partitions", 64, 1, max_partitions))),
      shuffle_config_(shuffle::ShuffleConfig::from_options(options)),
      limit_(memory::MemoryConfig::from_options(options).host_limit.resolve(memory::host_memory_capacity())) {
    stall_timeout_ = options.get_duration("seq_join_stall_timeout", std::chrono::nanoseconds::zero());
    check_compression(output_format_, compression_);
    // CSV files keep the input's extension (`.tbl`, say), as `PartitionJob` writes them.
    extension_ = input_.format() == io::FileFormat::csv && output_format_ == io::FileFormat::csv
                   ? csv_partition_extension(arguments.inputs.front())
                   : std::string(io::extension_of(output_format_));
    auto const local_ranks = ranks_.resources().size();
    auto const piece_bytes = input_.piece_bytes();
    auto const ranks = static_cast<std::uint64_t>(ranks_.size());
    auto const owned_partitions = (std::uint64_t{partitions_} + ranks - 1) / ranks;  // the most a rank owns
    auto const pieces = input_.pieces(static_cast<std::size_t>(ranks));
    auto const rank_memory = [&](std::uint64_t limit, std::size_t window) {
        return RankMemory::of(limit > fixed_bytes ? (limit - fixed_bytes) / local_ranks : 0, piece_bytes,
                              input_.reader_bytes(), output_format_, input_.schema(), window, pieces,
                              partitions_, owned_partitions);
    };
    auto const bound = [&](std::uint64_t limit, std::size_t window) {
        return fixed_bytes + local_ranks * rank_memory(limit, window).total();
    };
    auto const fits = [&](std::uint64_t limit, std::size_t window) { return bound(limit, window) <= limit; };
    if (!fits(limit_, 1)) {
        constexpr std::uint64_t mebibyte = std::uint64_t{1} << 20;
        auto least = std::max<std::uint64_t>(limit_ / mebibyte, 1);
        while (!fits(least * mebibyte, 1)) {
            ++least;
        }
        SPILLWAY_FAIL("memory limit " << format_bytes(limit_) << " is too small to partition on " << local_ranks
                                      << (local_ranks == 1 ? " rank" : " ranks") << " with input tables of "
                                      << format_bytes(piece_bytes)
                                      << (input_.reader_bytes() == 0 ? "" : " and file readers that hold ")
                                      << (input_.reader_bytes() == 0 ? "" : format_bytes(input_.reader_bytes()))
                                      << ": it needs at least "
                                      << format_least_limit(least * mebibyte)
                                      << "; raise memory_limit_host to at least that"
                                      << block_size_advice(input_.format(), rank_memory(limit_, 1))
                                      << (local_ranks == 1 ? "" : ", or lower --ranks")
                                      << (rank_memory(limit_, 1).of_partitions() < piece_bytes
                                              ? ""
                                              : ", or lower --partitions"),
                      InvalidArgument);
    }
    if (options.find("window")) {
        window_ = static_cast<std::size_t>(options.get_int("window", 1, 1, 1 << 20));
        if (!fits(limit_, window_)) {
            std::size_t largest = 1;
            while (fits(limit_, largest + 1)) {
                ++largest;
            }
            SPILLWAY_FAIL("--window " << window_ << " does not fit in the memory limit " << format_bytes(limit_)
                                      << " with input tables of " << format_bytes(piece_bytes) << " on "
                                      << local_ranks << (local_ranks == 1 ? " rank" : " ranks") << ": at most "
                                      << largest << " fit; lower --window or raise memory_limit_host",
                          InvalidArgument);
        }
    } else {
        auto const wanted = std::max<std::size_t>(1, tables_per_thread * pool_.concurrency() / local_ranks);
        window_ = 1;
        while (window_ < wanted && fits(limit_, window_ + 1)) {
            ++window_;
        }
    }
    bound_ = bound(limit_, window_);
    // The ranks' resources hold what the reader and writer do not.
    auto const rank_limit = (limit_ - fixed_bytes) / local_ranks;
    for (auto const& resource : ranks_.resources()) {
        resource->set_memory_limit(memory::MemoryType::HOST,
                                   SizeSpec::bytes(rank_limit - rank_memory(limit_, window_).outside));
    }
    auto const buffers = RankBuffers::for_limit(rank_limit);
    receive_batch_bytes_ = buffers.receive_batch;
    write_options_.compression = compression_;
    write_options_.row_group_bytes = buffers.write_buffer;
    write_options_.csv = input_.csv_options();
    if (ranks_.first_rank() == 0) {
        staged_output_.emplace(output_);
    }
}

RunSummary DistributedPartitionJob::run(Progress& progress) {
    auto const started = Clock::now();
    auto const local_ranks = ranks_.resources().size();
    std::uint64_t local_progress = 0;
    std::uint64_t local_partitions = 0;
    for (std::size_t local = 0; local < local_ranks; ++local) {
        auto const rank = static_cast<std::size_t>(ranks_.first_rank()) + local;
        auto const ranks = static_cast<std::size_t>(ranks_.size());
        local_progress += input_.progress_total(rank, ranks);
        local_partitions += shuffle::owned_partitions(shuffle::PartitionOwner::round_robin, partitions_,
                                                      ranks_.size(), static_cast<comm::Rank>(rank))
                                .size();
    }
    progress.start("partition", local_progress,
                   input_.progress_in_bytes() ? Progress::Unit::bytes : Progress::Unit::items);
    // No partition completes before every rank has inserted everything, so
    // the first rank to see one ends the partition phase for all. Each file
    // counts twice: written, then verified.
    std::once_flag write_started;
    auto const start_write = [&] {
        std::call_once(write_started, [&] {
            progress.complete();  // CSV input's header lines, which no table holds
            progress.finish();
            progress.start("write and verify", 2 * local_partitions, Progress::Unit::items);
        });
    };
    std::vector<std::vector<RankResult>> gathered(local_ranks);
    std::vector<std::string> first_misplaced(local_ranks);
    ranks_.run([&](comm::Communicator& communicator) {
        auto const local = static_cast<std::size_t>(communicator.rank() - ranks_.first_rank());
        gathered[local] = run_rank(communicator, progress, start_write, first_misplaced[local]);
    });
    progress.finish();
    auto const& results = gathered.front();

    RunSummary summary;
    summary.command = "partition";
    summary.settings["ranks"] = ranks_.size();
    summary.settings["comm"] = ranks_.uses_mpi() ? "mpi" : "local";
    PartitionSettings{.inputs = input_.files(),
                      .input_format = input_.format(),
                      .output_format = output_format_,
                      .compression = compression_,
                      .keys = key_names_,
                      .partitions = partitions_,
                      .output = output_,
                      .threads = pool_.concurrency()}
        .describe(summary.settings);
    summary.settings["window"] = window_;
    summary.settings["block_size_bytes"] = input_.piece_bytes();
    summary.settings["memory_limit_bytes"] = limit_;
    summary.settings["memory_bound_bytes"] = bound_;
    RankResult total;
    std::vector<RankMemoryFigures> memory;
    for (auto const& result : results) {
        total.input += result.input;
        total.output += result.output;
        total.misplaced_rows += result.misplaced_rows;
        total.skipped_rows += result.skipped_rows;
        memory.push_back(result.memory);
        total.partition_seconds = std::max(total.partition_seconds, result.partition_seconds);
        total.write_seconds = std::max(total.write_seconds, result.write_seconds);
        total.verify_seconds = std::max(total.verify_seconds, result.verify_seconds);
    }
    summary.rows = total.input.rows;
    if (input_.skips_bad_rows()) {
        summary.skipped_rows = total.skipped_rows;
    }
    summary.bytes = input_.bytes();
    ranks_.report_memory(summary, memory);

    PartitionCheck read_back{total.output, total.misplaced_rows, {}};
    for (auto const& found : first_misplaced) {
        if (read_back.first_misplaced.empty()) {
            read_back.first_misplaced = found;
        }
    }
    report_partition_check(read_back, total.input, summary);
    verified_ = *summary.verified;
    summary.phases = {{"partition", total.partition_seconds},
                      {"write", total.write_seconds},
                      {"verify", total.verify_seconds}};
    ranks_.finish(summary, progress, started);
    return summary;
}

std::vector<DistributedPartitionJob::RankResult> DistributedPartitionJob::run_rank(
    comm::Communicator& communicator, Progress& progress, std::function<void()> const& start_write,
    std::string& first_misplaced) {
    static_assert(std::is_trivially_copyable_v<RankResult>, "ranks exchange their results as bytes");
    auto& resource = communicator.buffer_resource();
    auto const rank = static_cast<std::size_t>(communicator.rank());
    auto const nranks = static_cast<std::size_t>(communicator.nranks());
    // Every rank writes into rank 0's staging directory.
    std::filesystem::path staging;
    {
        shuffle::AllGather gather(communicator, staging_op, resource, shuffle_config_);
        staging = gather_strings(gather, resource, staged_output_ ? staged_output_->staging().string() : "").front();
    }
    // Made now, so that a rank that finishes early (with fewer rows to
    // write, say) hears from the others while they still work.
    shuffle::AllGather results(communicator, results_op, resource, shuffle_config_);

    // Runs `work`, noting its error while the collectives above still exist.
    auto const noting_failure = [&](auto const& work) {
        try {
            work();
        } catch (...) {
            ranks_.note_failure(std::current_exception());
            throw;
        }
    };

    RankResult result;
    std::vector<PartitionFile> files;
    auto const started = Clock::now();
    {
        shuffle::Shuffler shuffler(communicator, shuffle_op, partitions_, resource,
                                   shuffle::PartitionOwner::round_robin, shuffle_config_);
        noting_failure([&] {
            auto const pack = [&](InputPiece piece, std::stop_token const&) {
                memory::ScopedHostResource const charged(&resource);
                auto const read = input_.to_table(std::move(piece));
                return PackedTable{
                    table_shuffle::hash_partition_and_pack(read.table, input_.keys(), partitions_, resource),
                    table::TableChecksum::of(read.table), read.skipped_rows, read.progress
                };
            };
            // The tables read count against the rank's limit too.
            auto read = [&resource, pieces = input_.source(rank, nranks)] {
                memory::ScopedHostResource const charged(&resource);
                return pieces();
            };
            {
                SeqJoinTracer tracer("pack table", window_, stall_timeout_);
                for (auto& packed : exec::seq_join(pool_, window_, std::move(read), pack, tracer.observe())) {
                    result.input += packed.checksum;
                    result.skipped_rows += packed.skipped_rows;
                    shuffler.insert(std::move(packed.pieces));
                    progress.advance(packed.progress);
                }
            }
            shuffler.insert_finished();
            auto const inserted = Clock::now();
            result.partition_seconds = to_seconds(inserted - started);

            // A partition that received nothing comes as one empty batch, so
            // that it gets its file. Once wait_any returns, every rank has
            // inserted everything, whether this one owns a partition or not.
            ReceivedBatches next_received(shuffler, receive_batch_bytes_, ReceivedBatches::EmptyPartitions::yield,
                                          [&](std::optional<shuffle::PartitionId>) { start_write(); });
            auto const unpack = [&](ReceivedChunks batch, std::stop_token const&) {
                memory::ScopedHostResource const charged(&resource);
                if (batch.chunks.empty()) {
                    return ReceivedTable{batch.partition, std::nullopt};
                }
                return ReceivedTable{batch.partition,
                                     table_shuffle::unpack(std::span<shuffle::PackedData const>(batch.chunks))};
            };
            std::unique_ptr<io::TableFileWriter> writer;
            auto const close_file = [&] {
                writer->close();
                files.back().longest_row_bytes = writer->longest_row_bytes();
                writer.reset();
                progress.advance(1);
            };
            SeqJoinTracer tracer("unpack chunks", window_, stall_timeout_);
            for (auto& received :
                 exec::seq_join(pool_, window_, std::move(next_received), unpack, tracer.observe())) {
                if (files.empty() || files.back().partition != received.partition) {
                    if (writer) {
                        close_file();
                    }
                    files.push_back({received.partition,
                                     partition_file(staging, received.partition, extension_), 0});
                    writer = io::create_table_file(files.back().path, output_format_, input_.schema(), write_options_);
                }
                if (received.rows) {
                    writer->write(std::move(*received.rows));
                }
            }
            if (writer) {
                close_file();
            }
            result.write_seconds = to_seconds(Clock::now() - inserted);
        });
    }

    // The shuffle's spill files hold nothing now: removed while the files
    // are read back, rather than all at the end.
    std::jthread const remove_spill_files([&resource] { resource.remove_free_spill_files(); });
    auto const written = Clock::now();
    Progress unreported(Progress::Style::none, std::cerr);
    PartitionCheck check;
    noting_failure([&] {
        SeqJoinTracer tracer("check table", window_, stall_timeout_);
        check = check_partition_tables(files, partitions_, output_format_, input_.csv_options(), input_.schema(),
                                       input_.keys(), pool_, window_, tracer.observe(), unreported);
    });
    progress.advance(files.size());
    result.output = check.checksum;
    result.misplaced_rows = check.misplaced_rows;
    first_misplaced = check.first_misplaced;
    result.verify_seconds = to_seconds(Clock::now() - written);

    result.memory = RankMemoryFigures::of(resource);
    return gather_values(results, resource, result);
}

void DistributedPartitionJob::commit() {
    if (verified_ && staged_output_) {
        staged_output_->commit();
    }
}

}  // namespace spillway::cli
