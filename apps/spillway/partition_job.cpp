#include "partition_job.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>

#include <spillway/core/error.hpp>
#include <spillway/exec/seq_join.hpp>
#include <spillway/memory/memory_config.hpp>
#include <spillway/memory/system_memory.hpp>
#include <spillway/table/hash_partition.hpp>

#include "job_limits.hpp"
#include "partition_check.hpp"
#include "partition_files.hpp"
#include "partition_settings.hpp"
#include "seq_join_tracer.hpp"

namespace spillway::cli {
namespace {

/// One input block split by partition.
struct SplitBlock {
    std::vector<std::string> pieces;  ///< the rows of partition p, verbatim, by p
    table::TableChecksum checksum;
    std::size_t bytes = 0;
    std::uint64_t skipped_rows = 0;  ///< rows with the wrong number of fields, left out
};

}  // namespace

PartitionJob::PartitionJob(PartitionArguments arguments, Options const& options)
    : input_(CsvInput::open(std::move(arguments.inputs), arguments.keys, options, arguments.schema)),
      output_(std::move(arguments.output)),
      key_names_(std::move(arguments.keys)),
      partitions_(static_cast<std::uint32_t>(options.get_int("partitions", 64, 1, max_partitions))),
      pool_(exec::ThreadPool::Config::from_options(options)) {
    stall_timeout_ = options.get_duration("seq_join_stall_timeout", std::chrono::nanoseconds::zero());
    SPILLWAY_EXPECTS(options.get_int("ranks", 1, 1, max_ranks) == 1
                         && options.get_choice("comm", {"local", "mpi"}, "local") == "local",
                     "PartitionJob runs on one local rank; DistributedPartitionJob on several", InvalidArgument);
    auto const limit = memory::MemoryConfig::from_options(options).host_limit.resolve(memory::host_memory_capacity());
    auto const window = options.find("window") ? std::optional<std::size_t>(options.get_int("window", 1, 1, 1 << 20))
                                               : std::nullopt;
    plan_ = PartitionPlan::make(limit, input_.options.chunk_bytes, pool_.concurrency(), partitions_, window);
    check_open_file_limit(partitions_);
    staged_output_.emplace(output_);
    auto const extension = csv_partition_extension(input_.files.front());
    auto writer_options = input_.options;
    writer_options.header = false;  // the input's header line is copied as it is
    for (std::uint32_t partition = 0; partition < partitions_; ++partition) {
        output_files_.push_back(partition_file(staged_output_->staging(), partition, extension));
        writers_.push_back(std::make_unique<io::CsvWriter>(output_files_.back(), writer_options, input_.schema,
                                                              plan_.write_buffer_bytes));
        writers_.back()->write_rows(input_.header);
    }
}

RunSummary PartitionJob::run(Progress& progress) {
    using Clock = std::chrono::steady_clock;
    auto const started = Clock::now();
    std::vector<std::size_t> key_positions(input_.keys.size());
    std::iota(key_positions.begin(), key_positions.end(), std::size_t{0});
    auto const split_block = [&](FileBlock file_block, std::stop_token const&) {
        auto const rows = input_.parse_keys(file_block.file, file_block.block);
        auto const partition_of_row = table::partition_rows(rows.columns, key_positions, partitions_);
        return SplitBlock{rows.split(partition_of_row, partitions_), rows.checksum(), file_block.block.text().size(),
                          rows.skipped_rows};
    };

    table::TableChecksum input_checksum;
    std::uint64_t skipped_rows = 0;
    progress.start("partition", input_.bytes, Progress::Unit::bytes);
    {
        SeqJoinTracer tracer("split block", plan_.window, stall_timeout_);
        auto join = exec::seq_join(pool_, plan_.window, CsvBlockSource(input_), split_block, tracer.observe());
        for (auto& block : join) {
            for (std::uint32_t partition = 0; partition < partitions_; ++partition) {
                writers_[partition]->write_rows(block.pieces[partition]);
            }
            input_checksum += block.checksum;
            skipped_rows += block.skipped_rows;
            progress.advance(block.bytes);
        }
    }
    progress.complete();  // the header lines, which no block holds
    std::uint64_t output_bytes = 0;
    // Rows are copied verbatim, but for a first field quoted at a file's
    // start: the blocks reading them back hold the longest row written.
    auto read_back = input_;
    for (auto& writer : writers_) {
        writer->close();
        output_bytes += writer->bytes_written();
        read_back.options.chunk_bytes = std::clamp(writer->longest_row_bytes(), read_back.options.chunk_bytes,
                                                   io::CsvOptions::max_chunk_bytes);
    }
    writers_.clear();
    progress.finish();
    auto const partitioned = Clock::now();

    progress.start("verify", output_bytes, Progress::Unit::bytes);
    SeqJoinTracer tracer("check block", plan_.window, stall_timeout_);
    auto const check =
        check_partition_files(output_files_, read_back, pool_, plan_.window, tracer.observe(), progress);
    progress.complete();
    progress.finish();
    auto const finished = Clock::now();

    RunSummary summary;
    summary.command = "partition";
    PartitionSettings{.inputs = input_.files.size(),
                      .input_format = io::FileFormat::csv,
                      .output_format = io::FileFormat::csv,
                      .compression = {},
                      .keys = key_names_,
                      .partitions = partitions_,
                      .output = output_,
                      .threads = pool_.concurrency()}
        .describe(summary.settings);
    plan_.describe(summary.settings);
    summary.rows = input_checksum.rows;
    if (input_.options.bad_rows == io::CsvOptions::BadRows::skip) {
        summary.skipped_rows = skipped_rows;
    }
    summary.bytes = input_.bytes;
    summary.seconds = to_seconds(finished - started);
    summary.phases = {{"partition", to_seconds(partitioned - started)},
                      {"verify", to_seconds(finished - partitioned)}};
    summary.peak_resident_bytes = peak_resident_bytes();
    report_partition_check(check, input_checksum, summary);
    verified_ = *summary.verified;
    return summary;
}

void PartitionJob::commit() {
    if (verified_) {
        staged_output_->commit();
    }
}

}  // namespace spillway::cli
