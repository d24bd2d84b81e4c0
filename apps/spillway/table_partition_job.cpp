#include "table_partition_job.hpp"

#include <chrono>
#include <functional>
#include <variant>

#include <spillway/core/error.hpp>
#include <spillway/exec/parallel_join.hpp>
#include <spillway/exec/seq_join.hpp>
#include <spillway/memory/memory_config.hpp>
#include <spillway/memory/system_memory.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table/table_checksum.hpp>

#include "job_limits.hpp"
#include "partition_check.hpp"
#include "partition_files.hpp"
#include "partition_settings.hpp"
#include "seq_join_tracer.hpp"

namespace spillway::cli {
namespace {

/// What a worker wrote of an input table.
struct WrittenTable {
    table::TableChecksum checksum;
    std::uint64_t skipped_rows = 0;
    std::uint64_t progress = 0;  ///< as `InputTable::progress`
};

}  // namespace

bool partitions_csv_verbatim(PartitionArguments const& arguments) {
    return input_format_of(arguments) == io::FileFormat::csv && output_format_of(arguments) == io::FileFormat::csv;
}

TablePartitionJob::TablePartitionJob(PartitionArguments arguments, Options const& options)
    : input_(arguments, options),
      output_format_(output_format_of(arguments)),
      compression_(arguments.compression.empty() ? "zstd" : arguments.compression),
      output_(std::move(arguments.output)),
      key_names_(arguments.keys),
      partitions_(static_cast<std::uint32_t>(options.get_int("partitions", 64, 1, max_partitions))),
      pool_(exec::ThreadPool::Config::from_options(options)) {
    stall_timeout_ = options.get_duration("seq_join_stall_timeout", std::chrono::nanoseconds::zero());
    SPILLWAY_EXPECTS(options.get_int("ranks", 1, 1, max_ranks) == 1
                         && options.get_choice("comm", {"local", "mpi"}, "local") == "local",
                     "TablePartitionJob runs on one local rank; DistributedPartitionJob on several",
                     InvalidArgument);
    check_compression(output_format_, compression_);
    auto const block_bytes = input_.piece_bytes();
    auto const limit = memory::MemoryConfig::from_options(options).host_limit.resolve(memory::host_memory_capacity());
    auto const window = options.find("window") ? std::optional<std::size_t>(options.get_int("window", 1, 1, 1 << 20))
                                               : std::nullopt;
    PartitionPlan::Files const files{
        output_format_ == io::FileFormat::parquet ? PartitionPlan::largest_row_group
                                                  : PartitionPlan::largest_write_buffer,
        io::writer_overhead_bytes(output_format_, input_.schema()),
        [format = output_format_](std::uint64_t buffer) { return io::writer_flush_bytes(format, buffer); },
        input_.reader_bytes(), input_.format() == io::FileFormat::csv};
    plan_ = PartitionPlan::make(limit, block_bytes, pool_.concurrency(), partitions_, window, files);
    check_open_file_limit(partitions_);

    io::WriteOptions write_options;
    write_options.compression = compression_;
    write_options.row_group_bytes = plan_.write_buffer_bytes;
    write_options.csv = input_.csv_options();
    staged_output_.emplace(output_);
    for (std::uint32_t partition = 0; partition < partitions_; ++partition) {
        output_files_.push_back(
            partition_file(staged_output_->staging(), partition, io::extension_of(output_format_)));
        auto writer = std::make_unique<PartitionWriter>();
        MutexLock lock(writer->mutex);
        writer->file = io::create_table_file(output_files_.back(), output_format_, input_.schema(), write_options);
        writers_.push_back(std::move(writer));
    }
}

RunSummary TablePartitionJob::run(Progress& progress) {
    using Clock = std::chrono::steady_clock;
    auto const started = Clock::now();

    auto const split_and_write = [&](InputPiece piece, std::stop_token const&) {
        auto const read = input_.to_table(std::move(piece));
        auto const partition_of_row = table::partition_rows(read.table, input_.keys(), partitions_);
        auto pieces = table::split_by_partition(read.table, partition_of_row, partitions_);
        // Files another worker is writing are left for a second round, so
        // that workers going through the partitions in the same order do
        // not wait for each other at every file.
        std::vector<std::uint32_t> busy;
        for (std::uint32_t partition = 0; partition < partitions_; ++partition) {
            auto& writer = *writers_[partition];
            if (pieces[partition].num_rows() == 0) {
                continue;
            }
            if (!writer.mutex.try_lock()) {
                busy.push_back(partition);
                continue;
            }
            MutexLock const lock(writer.mutex, std::adopt_lock);
            writer.file->write(std::move(pieces[partition]));
        }
        for (auto const partition : busy) {
            auto& writer = *writers_[partition];
            MutexLock const lock(writer.mutex);
            writer.file->write(std::move(pieces[partition]));
        }
        return WrittenTable{table::TableChecksum::of(read.table), read.skipped_rows, read.progress};
    };

    table::TableChecksum input_checksum;
    std::uint64_t skipped_rows = 0;
    progress.start("partition", input_.progress_total(0, 1),
                   input_.progress_in_bytes() ? Progress::Unit::bytes : Progress::Unit::items);
    {
        SeqJoinTracer tracer("split and write table", plan_.window, stall_timeout_);
        auto join = exec::seq_join(pool_, plan_.window, input_.source(0, 1), split_and_write, tracer.observe());
        for (auto const& written : join) {
            input_checksum += written.checksum;
            skipped_rows += written.skipped_rows;
            progress.advance(written.progress);
        }
    }
    // Closing a file writes the rows it still holds: the files close in parallel.
    std::vector<std::function<bool(std::stop_token const&)>> closes;
    for (auto& writer : writers_) {
        closes.emplace_back([&writer = *writer](std::stop_token const&) {
            MutexLock const lock(writer.mutex);
            writer.file->close();
            return true;
        });
    }
    static_cast<void>(exec::parallel_join(pool_, std::move(closes)));
    std::vector<PartitionFile> files;
    for (std::uint32_t partition = 0; partition < partitions_; ++partition) {
        MutexLock const lock(writers_[partition]->mutex);
        files.push_back({partition, output_files_[partition], writers_[partition]->file->longest_row_bytes()});
    }
    writers_.clear();
    progress.complete();  // CSV input's header lines, which no table holds
    progress.finish();
    auto const partitioned = Clock::now();

    progress.start("verify", input_checksum.rows, Progress::Unit::items);
    PartitionCheck check;
    {
        SeqJoinTracer tracer("check table", plan_.window, stall_timeout_);
        check = check_partition_tables(files, partitions_, output_format_, input_.csv_options(), input_.schema(),
                                       input_.keys(), pool_, plan_.window, tracer.observe(), progress);
    }
    progress.finish();
    auto const finished = Clock::now();

    RunSummary summary;
    summary.command = "partition";
    PartitionSettings{.inputs = input_.files(),
                      .input_format = input_.format(),
                      .output_format = output_format_,
                      .compression = compression_,
                      .keys = key_names_,
                      .partitions = partitions_,
                      .output = output_,
                      .threads = pool_.concurrency()}
        .describe(summary.settings);
    plan_.describe(summary.settings);
    summary.rows = input_checksum.rows;
    if (input_.skips_bad_rows()) {
        summary.skipped_rows = skipped_rows;
    }
    summary.bytes = input_.bytes();
    summary.seconds = to_seconds(finished - started);
    summary.phases = {{"partition", to_seconds(partitioned - started)},
                      {"verify", to_seconds(finished - partitioned)}};
    summary.peak_resident_bytes = peak_resident_bytes();
    report_partition_check(check, input_checksum, summary);
    verified_ = *summary.verified;
    return summary;
}

void TablePartitionJob::commit() {
    if (verified_) {
        staged_output_->commit();
    }
}

}  // namespace spillway::cli
