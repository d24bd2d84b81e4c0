#include "shuffle_job.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdint>
#include <mutex>
#include <optional>
#include <sstream>
#include <type_traits>
#include <unordered_map>

#include <spillway/core/error.hpp>
#include <spillway/exec/seq_join.hpp>
#include <spillway/memory/host_allocator.hpp>
#include <spillway/memory/memory_config.hpp>
#include <spillway/shuffle/all_gather.hpp>
#include <spillway/shuffle/shuffler.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table_shuffle/chunk_coalescer.hpp>
#include <spillway/table_shuffle/packed_partitions.hpp>
#include <spillway/table/packed_table.hpp>

#include "chunk_numbers.hpp"
#include "interruption.hpp"
#include "job_limits.hpp"
#include "option_flags.hpp"
#include "rank_values.hpp"
#include "received_batches.hpp"
#include "seq_join_tracer.hpp"

namespace spillway::cli {
namespace {

using Clock = std::chrono::steady_clock;

/// The scale factor of the default run: about 1 GiB of lineitem in memory.
constexpr double default_scale = 1.3;
/// Partitions per rank unless `partitions` is set.
constexpr std::int64_t partitions_per_rank = 4;
/// Chunks in flight per worker thread (shared by this process's ranks)
/// unless `window` is set.
constexpr std::size_t chunks_per_thread = 2;
/// The shuffled rows' key: l_orderkey.
constexpr std::size_t key_columns[] = {0};
/// The collectives' op ids.
constexpr shuffle::OpId shuffle_op = 0;
constexpr shuffle::OpId gather_op = 1;

memory::MemoryConfig memory_config(Options const& options) {
    auto config = memory::MemoryConfig::from_options(options);
    if (!options.find(memory::MemoryConfig::limit_option(memory::MemoryType::HOST))) {
        config.host_limit = SizeSpec::bytes(ShuffleJob::default_memory_limit);
    }
    return config;
}

/// One generated chunk and the partition of each of its rows.
struct GeneratedChunk {
    table::Table table;
    std::vector<std::uint32_t> partition_of_row;
    table::TableChecksum checksum;
};

/// The bytes of received chunks the verify phase unpacks and checks as one
/// table: with many partitions the chunks are a few KiB each, and one table
/// per chunk would cost more to make than to check. A 64th of the rank's
/// HOST limit, at most 1 MiB.
std::uint64_t check_batch_bytes(std::uint64_t host_limit) {
    return std::min<std::uint64_t>(host_limit / 64, std::uint64_t{1} << 20);
}

/// What one generating work item holds at its peak, measured on chunk 0 in
/// a resource of `config` without a limit: the generated table and its
/// pieces, packed by partition (`peak`), and the table alone (`table`, of
/// `rows` rows).
struct ItemBytes {
    std::uint64_t peak = 0;
    std::uint64_t table = 0;
    std::uint64_t rows = 0;
};

ItemBytes generating_item_bytes(table::TpchGenerator const& generator, shuffle::PartitionId partitions,
                                memory::MemoryConfig config) {
    config.host_limit = SizeSpec::percent(100);
    config.spill_interval = std::chrono::nanoseconds::zero();
    std::optional<memory::BufferResource> scratch;
    RemoveOnInterruption const scratch_spill_directory([&] { return scratch.emplace(config).spill_directory(); });
    ItemBytes bytes;
    {
        memory::ScopedHostResource const charged(&*scratch);
        auto const table = generator.lineitem(0);
        bytes.table = table.byte_size();
        bytes.rows = table.num_rows();
        static_cast<void>(table_shuffle::hash_partition_and_pack(table, key_columns, partitions, *scratch));
    }
    bytes.peak = scratch->peak_memory_used(memory::MemoryType::HOST);
    scratch.reset();  // its spill directory goes while it is still registered
    return bytes;
}

/// What a rank holds as it generates, coalesces and packs chunks, outside
/// anything spillable, for a coalescing budget of C bytes. Without a budget,
/// each work item in flight, and the one being handed on, holds a table and
/// its packed pieces (`item.peak`: chunks vary, hence its margin). With one,
/// a work item holds only its table (B), and the coalescer up to C + B of
/// tables, which it packs into as many bytes of chunks plus the overhead of
/// every partition's piece (what packing chunk 0 took beyond twice its
/// table), what a flush keeps per table and partition
/// (`gather_bytes_per_partition`), and each chunk's record until the
/// shuffler has it. Besides, every chunk the rank receives keeps
/// `Shuffler::bytes_per_chunk` reserved until the exchange ends, spilled or
/// not. Each rank flushes about once per C + B
/// bytes of its chunks; without a budget, once per chunk. Each flush sends a
/// chunk to every partition with rows, so a rank receives, from every flush
/// of every rank, a chunk for each partition it owns or each row flushed,
/// whichever is fewer: with many partitions, this bookkeeping is what a
/// small budget costs.
struct CoalescingCost {
    std::uint64_t ranks = 1;
    std::uint64_t window = 1;            ///< work items in flight
    std::uint64_t chunks_per_rank = 1;   ///< the most any rank generates
    std::uint64_t owned_partitions = 1;  ///< the most any rank owns
    std::uint64_t partitions = 1;        ///< of the shuffle
    ItemBytes item;                      ///< with the margin of chunks that vary

    /// What a flush keeps per table held and partition beyond its chunks, as
    /// measured rather than derived: the packing's counts per table
    /// (`table::PackedGather`, `table::detail::count_partitions`) come to
    /// less, but scale 0.3 into 20,000 partitions at 600 MiB ran out of
    /// memory with less counted.
    static constexpr std::uint64_t gather_bytes_per_partition = 64;
    /// What a flush's chunk holds besides its buffer until it is sent: its
    /// metadata, and its record in the chunks handed to the shuffler.
    static constexpr std::uint64_t chunk_record_bytes = 256;

    /// The chunks a rank receives with a budget of `budget` bytes.
    [[nodiscard]] std::uint64_t received_chunks(std::uint64_t budget) const {
        auto const bytes_per_rank = chunks_per_rank * item.table;
        auto const flushes = std::min(
            chunks_per_rank,
            budget == 0 ? chunks_per_rank : (bytes_per_rank + budget + item.table - 1) / (budget + item.table)
        );
        if (flushes == 0) {
            return 0;
        }
        auto const rows_per_flush = (chunks_per_rank * item.rows + flushes - 1) / flushes;
        return ranks * flushes * std::min(owned_partitions, rows_per_flush);
    }

    /// The bookkeeping of those chunks.
    [[nodiscard]] std::uint64_t received_bytes(std::uint64_t budget) const {
        return received_chunks(budget) * shuffle::Shuffler::bytes_per_chunk();
    }

    /// The bytes a rank needs for a budget of `budget` bytes.
    [[nodiscard]] std::uint64_t bytes(std::uint64_t budget) const {
        if (budget == 0) {
            return (window + 1) * item.peak + received_bytes(0);
        }
        auto const piece_overhead = item.peak > 2 * item.table ? item.peak - 2 * item.table : 0;
        auto const tables_held = budget / std::max<std::uint64_t>(item.table, 1) + 1;
        auto const gather_state = tables_held * partitions * gather_bytes_per_partition;
        auto const flushed_chunks = std::min(partitions, tables_held * item.rows);
        auto const flushed_records = flushed_chunks * (chunk_record_bytes + shuffle::Shuffler::bytes_per_chunk());
        return window * item.table + 2 * (budget + item.table) + piece_overhead + gather_state + flushed_records
             + received_bytes(budget);
    }

    /// The smallest budget worth trying: an eighth of a chunk's table, or
    /// `most` if that is less.
    [[nodiscard]] std::uint64_t smallest_budget(std::uint64_t most) const { return std::min(most, item.table / 8); }

    /// The budget, at most `most`, for which `bytes` is least: among `most`
    /// and its halvings down to `smallest_budget`, and none.
    /// What the least limit that works is named with.
    [[nodiscard]] std::uint64_t cheapest_budget(std::uint64_t most) const {
        std::uint64_t best = 0;
        for (auto budget = most; budget > 0 && budget >= smallest_budget(most); budget /= 2) {
            if (bytes(budget) < bytes(best)) {
                best = budget;
            }
        }
        return best;
    }

    /// A budget, at most `most`, whose `bytes` fit in `room`, as large as
    /// one is found: the largest of `most` and its halvings down to
    /// `smallest_budget` that fits, raised towards the one above it while it
    /// fits; none (0) if none of them fits but no coalescing does; nullopt
    /// if nothing fits.
    [[nodiscard]] std::optional<std::uint64_t> budget_within(std::uint64_t room, std::uint64_t most) const {
        for (auto budget = most; budget > 0 && budget >= smallest_budget(most); budget /= 2) {
            if (bytes(budget) > room) {
                continue;
            }
            auto low = budget;
            auto high = std::min(most, 2 * budget);
            while (low < high) {
                auto const middle = low + (high - low + 1) / 2;
                if (bytes(middle) <= room) {
                    low = middle;
                } else {
                    high = middle - 1;
                }
            }
            return low;
        }
        return bytes(0) <= room ? std::optional<std::uint64_t>(0) : std::nullopt;
    }
};

}  // namespace

ShuffleJob::ShuffleJob(Options const& options)
    : generator_(positive_number_option(options, "scale", default_scale, table::TpchGenerator::max_scale),
                 static_cast<std::uint64_t>(options.get_int("seed", 0, 0, INT64_MAX))),
      ranks_(options, memory_config(options), 4),
      pool_(exec::ThreadPool::Config::from_options(options)),
      partitions_(static_cast<shuffle::PartitionId>(
          options.get_int("partitions", partitions_per_rank * ranks_.size(), 1, max_partitions))),
      window_(static_cast<std::size_t>(options.get_int(
          "window",
          static_cast<std::int64_t>(std::max<std::size_t>(
              1, chunks_per_thread * pool_.concurrency() / ranks_.resources().size())),
          1, 1 << 20))),
      shuffle_config_(shuffle::ShuffleConfig::from_options(options)) {
    stall_timeout_ = options.get_duration("seq_join_stall_timeout", std::chrono::nanoseconds::zero());
    // A rank holds what `CoalescingCost` counts for the budget it is given,
    // and its shuffler the state of the partitions it owns.
    auto item = generating_item_bytes(generator_, partitions_, memory_config(options));
    item.peak = item.peak * 5 / 4;
    item.table = item.table * 5 / 4;
    item.rows = item.rows * 5 / 4;
    auto const ranks = static_cast<std::uint64_t>(ranks_.size());
    CoalescingCost const coalescing{
        .ranks = ranks,
        .window = window_,
        .chunks_per_rank = (generator_.num_chunks() + ranks - 1) / ranks,
        .owned_partitions = (std::uint64_t{partitions_} + ranks - 1) / ranks,
        .partitions = partitions_,
        .item = item,
    };
    auto const partition_state = coalescing.owned_partitions * shuffle::Shuffler::bytes_per_partition();
    auto const most_budget = std::uint64_t{partitions_} * table_shuffle::ChunkCoalescer::bytes_per_partition;
    auto const limit = ranks_.host_limit_per_rank();
    auto const budget =
        limit < partition_state ? std::nullopt : coalescing.budget_within(limit - partition_state, most_budget);
    if (!budget) {
        constexpr std::uint64_t mebibyte = std::uint64_t{1} << 20;
        auto const cheapest = coalescing.cheapest_budget(most_budget);
        auto const state = partition_state + coalescing.received_bytes(cheapest);
        bool const many_partitions = state >= item.peak;
        std::ostringstream partitions;
        if (many_partitions) {
            partitions << " and the state of " << coalescing.owned_partitions
                       << " partitions and of the chunks they receive, " << format_bytes(state);
        }
        auto const least = ((partition_state + coalescing.bytes(cheapest)) * ranks_.resources().size() + mebibyte - 1)
                         / mebibyte * mebibyte;
        SPILLWAY_FAIL("memory limit " << format_bytes(limit) << " per rank is too small for " << window_
                                      << (window_ == 1 ? " generated chunk" : " generated chunks")
                                      << " in flight of " << format_bytes(item.peak) << " each" << partitions.str()
                                      << ": give this process a memory_limit_host of at least "
                                      << format_least_limit(least) << " (shared by its " << ranks_.resources().size()
                                      << (ranks_.resources().size() == 1 ? " rank)" : " ranks)")
                                      << (window_ == 1 ? "" : ", or lower --window")
                                      << (many_partitions ? ", or lower --partitions" : ""),
                      InvalidArgument);
    }
    coalesce_bytes_ = *budget;
}

RunSummary ShuffleJob::run(Progress& progress) {
    auto const started = Clock::now();
    auto const local_ranks = ranks_.resources().size();
    std::vector<std::vector<RankResult>> gathered(local_ranks);
    std::uint64_t local_chunks = 0;
    std::uint64_t local_partitions = 0;
    for (std::size_t local = 0; local < local_ranks; ++local) {
        auto const rank = static_cast<std::size_t>(ranks_.first_rank()) + local;
        local_chunks += chunk_count(rank, static_cast<std::size_t>(ranks_.size()), generator_.num_chunks());
        local_partitions += shuffle::owned_partitions(shuffle::PartitionOwner::round_robin, partitions_,
                                                      ranks_.size(), static_cast<comm::Rank>(rank))
                                .size();
    }
    progress.start("generate", local_chunks, Progress::Unit::items);
    // No partition completes before every rank has inserted everything, so
    // the first rank to see one ends the generate phase for all.
    std::once_flag verify_started;
    auto const start_verify = [&] {
        std::call_once(verify_started, [&] {
            progress.finish();
            progress.start("verify", local_partitions, Progress::Unit::items);
        });
    };
    ranks_.run([&](comm::Communicator& communicator) {
        gathered[static_cast<std::size_t>(communicator.rank() - ranks_.first_rank())] =
            run_rank(communicator, progress, start_verify);
    });
    progress.finish();
    auto const& results = gathered.front();

    RunSummary summary;
    summary.command = "shuffle";
    summary.settings["ranks"] = ranks_.size();
    summary.settings["comm"] = ranks_.uses_mpi() ? "mpi" : "local";
    summary.settings["threads"] = pool_.concurrency();
    summary.settings["window"] = window_;
    summary.settings["partitions"] = partitions_;
    summary.settings["scale"] = generator_.scale();
    summary.settings["seed"] = generator_.seed();
    summary.settings["codec"] = std::string(memory::to_string(ranks_.resources().front()->config().spill_codec));
    summary.settings["coalesce_bytes"] = coalesce_bytes_;
    ShuffleCheck received;
    table::TableChecksum input;
    std::vector<RankMemoryFigures> memory;
    RankResult slowest;
    for (auto const& result : results) {
        received += result.check;
        input += result.input;
        summary.bytes += result.bytes;
        memory.push_back(result.memory);
        slowest.generate_seconds = std::max(slowest.generate_seconds, result.generate_seconds);
        slowest.exchange_seconds = std::max(slowest.exchange_seconds, result.exchange_seconds);
        slowest.verify_seconds = std::max(slowest.verify_seconds, result.verify_seconds);
    }
    summary.rows = input.rows;
    ranks_.report_memory(summary, memory);
    summary.phases = {{"generate", slowest.generate_seconds},
                      {"exchange", slowest.exchange_seconds},
                      {"verify", slowest.verify_seconds}};
    ranks_.finish(summary, progress, started);
    bool const placed = received.misplaced_rows == 0;
    bool const complete = received.checksum == input;
    summary.verified = placed && complete;
    summary.verification.push_back(placed ? "every row arrived in the partition its key hashes to"
                                          : std::to_string(received.misplaced_rows)
                                                + " rows arrived in a partition their key does not hash to");
    summary.verification.push_back(complete ? "rows and checksum equal the input's: " + input.to_string()
                                            : "rows and checksum differ: input " + input.to_string() + ", output "
                                                  + received.checksum.to_string());
    return summary;
}

std::vector<ShuffleJob::RankResult> ShuffleJob::run_rank(comm::Communicator& communicator, Progress& progress,
                                                         std::function<void()> const& start_verify) {
    static_assert(std::is_trivially_copyable_v<RankResult>, "ranks exchange their results as bytes");
    auto& resource = communicator.buffer_resource();
    auto const rank = static_cast<std::size_t>(communicator.rank());
    auto const nranks = static_cast<std::size_t>(communicator.nranks());
    // Made now, so that a rank that finishes early hears from the others
    // while they still work.
    shuffle::AllGather gather(communicator, gather_op, resource, shuffle_config_);
    RankResult result;
    auto const started = Clock::now();
    {
        shuffle::Shuffler shuffler(communicator, shuffle_op, partitions_, resource,
                                   shuffle::PartitionOwner::round_robin, shuffle_config_);
        auto const generate_chunk = [&](std::size_t chunk, std::stop_token const&) {
            memory::ScopedHostResource const charged(&resource);
            auto table = generator_.lineitem(chunk);
            auto partition_of_row = table::partition_rows(table, key_columns, partitions_);
            auto const checksum = table::TableChecksum::of(table);
            return GeneratedChunk{std::move(table), std::move(partition_of_row), checksum};
        };
        {
            SeqJoinTracer tracer("generate chunk", window_, stall_timeout_);
            auto chunks = chunk_numbers(rank, nranks, generator_.num_chunks());
            table_shuffle::ChunkCoalescer coalescer(resource, partitions_, coalesce_bytes_);
            for (auto& generated : exec::seq_join(pool_, window_, chunks, generate_chunk, tracer.observe())) {
                result.input += generated.checksum;
                result.bytes += generated.table.byte_size();
                shuffler.insert(coalescer.add(std::move(generated.table), std::move(generated.partition_of_row)));
                progress.advance(1);
            }
            shuffler.insert(coalescer.flush());
        }
        shuffler.insert_finished();
        auto const inserted = Clock::now();
        result.generate_seconds = to_seconds(inserted - started);

        // The first partition to complete ends the exchange.
        auto const batch_bytes = check_batch_bytes(ranks_.host_limit_per_rank());
        std::optional<Clock::time_point> first_complete;
        ReceivedBatches next_received(shuffler, batch_bytes, ReceivedBatches::EmptyPartitions::skip,
                                      [&](std::optional<shuffle::PartitionId> partition) {
                                          if (!partition) {
                                              return;
                                          }
                                          if (!first_complete) {
                                              first_complete = Clock::now();
                                              start_verify();
                                          }
                                          progress.advance(1);
                                      });
        auto const check_chunk = [&](ReceivedChunks batch, std::stop_token const&) {
            memory::ScopedHostResource const charged(&resource);
            auto const table = table_shuffle::unpack(std::span<shuffle::PackedData const>(batch.chunks));
            ShuffleCheck check;
            check.add(table, key_columns, batch.partition, partitions_);
            return check;
        };
        SeqJoinTracer tracer("check chunks", window_, stall_timeout_);
        for (auto const& check :
             exec::seq_join(pool_, window_, std::move(next_received), check_chunk, tracer.observe())) {
            result.check += check;
        }
        auto const verified = Clock::now();
        result.exchange_seconds = to_seconds(first_complete.value_or(verified) - inserted);
        result.verify_seconds = to_seconds(verified - first_complete.value_or(verified));
    }

    result.memory = RankMemoryFigures::of(resource);
    return gather_values(gather, resource, result);
}

}  // namespace spillway::cli
