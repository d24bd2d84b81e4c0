#include "table_partition_job.hpp"

#include <chrono>
#include <variant>

#include <spillway/core/error.hpp>
#include <spillway/exec/seq_join.hpp>
#include <spillway/memory/memory_config.hpp>
#include <spillway/memory/system_memory.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table/table_checksum.hpp>

#include "partition_files.hpp"
#include "seq_join_tracer.hpp"

namespace spillway::cli {
namespace {

/// The input format `arguments` name, or the one the first input implies.
io::FileFormat input_format_of(PartitionArguments const& arguments) {
    if (!arguments.input_format.empty()) {
        return io::parse_file_format(arguments.input_format);
    }
    return arguments.inputs.empty() ? io::FileFormat::csv : io::format_of(arguments.inputs.front());
}

/// The output format `arguments` name, or the input's.
io::FileFormat output_format_of(PartitionArguments const& arguments) {
    return arguments.output_format.empty() ? input_format_of(arguments)
                                           : io::parse_file_format(arguments.output_format);
}

/// A table of input rows, parsed or read, with the rows that were skipped.
struct InputTable {
    table::Table table;
    std::uint64_t skipped_rows = 0;
    std::size_t progress = 0;  ///< bytes of CSV or rows of Parquet and Arrow input, for progress
};

/// What a worker wrote of an input table.
struct WrittenTable {
    table::TableChecksum checksum;
    std::uint64_t skipped_rows = 0;
    std::size_t progress = 0;  ///< as `InputTable::progress`
};

/// What reading back one output table found.
struct TableCheck {
    table::TableChecksum checksum;
    std::uint64_t misplaced_rows = 0;
    std::size_t rows = 0;
};

}  // namespace

bool partitions_csv_verbatim(PartitionArguments const& arguments) {
    return input_format_of(arguments) == io::FileFormat::csv && output_format_of(arguments) == io::FileFormat::csv;
}

TablePartitionJob::TablePartitionJob(PartitionArguments arguments, Options const& options)
    : output_format_(output_format_of(arguments)),
      compression_(arguments.compression.empty() ? "zstd" : arguments.compression),
      output_(std::move(arguments.output)),
      key_names_(arguments.keys),
      partitions_(static_cast<std::uint32_t>(options.get_int("partitions", 64, 1, std::int64_t{1} << 24))),
      pool_(exec::ThreadPool::Config::from_options(options)) {
    SPILLWAY_EXPECTS(options.get_int("ranks", 1, 1, 4096) == 1 && options.get_string("comm", "local") == "local",
                     "spillway partition runs on one local rank; leave out --ranks and --comm", InvalidArgument);
    auto const input_format = input_format_of(arguments);
    std::uint64_t block_bytes = 0;
    if (input_format == io::FileFormat::csv) {
        csv_input_.emplace(CsvInput::open(std::move(arguments.inputs), arguments.keys, options, arguments.schema));
        block_bytes = csv_input_->options.chunk_bytes;
    } else {
        SPILLWAY_EXPECTS(arguments.schema.empty(), "--schema applies to CSV input; " << io::to_string(input_format)
                                                       << " files carry their column types",
                         InvalidArgument);
        table_input_.emplace(TableInput::open(std::move(arguments.inputs), arguments.keys, input_format));
        block_bytes = std::max<std::uint64_t>(table_input_->largest_read_bytes, 1);
    }
    auto const limit = memory::MemoryConfig::from_options(options).host_limit.resolve(memory::host_memory_capacity());
    auto const window = options.find("window") ? std::optional<std::size_t>(options.get_int("window", 1, 1, 1 << 20))
                                               : std::nullopt;
    PartitionPlan::FileWriters const writers{PartitionPlan::largest_write_buffer,
                                             io::writer_overhead_bytes(output_format_, schema())};
    plan_ = PartitionPlan::make(limit, block_bytes, pool_.concurrency(), partitions_, window, writers);
    check_open_file_limit(partitions_);

    io::WriteOptions write_options;
    write_options.compression = compression_;
    write_options.row_group_bytes = plan_.write_buffer_bytes;
    if (csv_input_) {
        write_options.csv = csv_input_->options;
    }
    staged_output_.emplace(output_);
    for (std::uint32_t partition = 0; partition < partitions_; ++partition) {
        output_files_.push_back(
            partition_file(staged_output_->staging(), partition, io::extension_of(output_format_)));
        auto writer = std::make_unique<PartitionWriter>();
        MutexLock lock(writer->mutex);
        writer->file = io::create_table_file(output_files_.back(), output_format_, schema(), write_options);
        writers_.push_back(std::move(writer));
    }
}

table::Schema const& TablePartitionJob::schema() const noexcept {
    return csv_input_ ? csv_input_->schema : table_input_->schema;
}

std::vector<std::size_t> const& TablePartitionJob::keys() const noexcept {
    return csv_input_ ? csv_input_->keys : table_input_->keys;
}

RunSummary TablePartitionJob::run(Progress& progress) {
    using Clock = std::chrono::steady_clock;
    auto const started = Clock::now();

    // CSV blocks are parsed by the workers; Parquet and Arrow tables arrive read.
    using Input = std::variant<FileBlock, FileTable>;
    auto const to_table = [&](Input input) {
        if (auto* block = std::get_if<FileBlock>(&input)) {
            auto rows = csv_input_->parse_all(block->file, block->block);
            return InputTable{std::move(rows.columns), rows.skipped_rows, block->block.text().size()};
        }
        auto& read = std::get<FileTable>(input);
        auto const rows = read.table.num_rows();
        return InputTable{std::move(read.table), 0, rows};
    };
    auto const split_and_write = [&](Input input, std::stop_token const&) {
        auto const read = to_table(std::move(input));
        auto const partition_of_row = table::partition_rows(read.table, keys(), partitions_);
        auto pieces = table::split_by_partition(read.table, partition_of_row, partitions_);
        for (std::uint32_t partition = 0; partition < partitions_; ++partition) {
            if (pieces[partition].num_rows() != 0) {
                auto& writer = *writers_[partition];
                MutexLock lock(writer.mutex);
                writer.file->write(std::move(pieces[partition]));
            }
        }
        return WrittenTable{table::TableChecksum::of(read.table), read.skipped_rows, read.progress};
    };
    std::function<std::optional<Input>()> source;
    if (csv_input_) {
        source = [blocks = std::make_shared<CsvBlockSource>(*csv_input_)]() -> std::optional<Input> {
            auto block = (*blocks)();
            return block ? std::optional<Input>(std::move(*block)) : std::nullopt;
        };
    } else {
        source = [tables = std::make_shared<TableSource>(*table_input_)]() -> std::optional<Input> {
            auto table = (*tables)();
            return table ? std::optional<Input>(std::move(*table)) : std::nullopt;
        };
    }

    table::TableChecksum input_checksum;
    std::uint64_t skipped_rows = 0;
    // CSV input is counted in bytes of text, Parquet and Arrow in rows.
    auto const input_bytes = csv_input_ ? csv_input_->bytes : table_input_->bytes;
    if (csv_input_) {
        progress.start("partition", input_bytes, Progress::Unit::bytes);
    } else {
        progress.start("partition", table_input_->rows, Progress::Unit::items);
    }
    {
        SeqJoinTracer tracer("split and write table", plan_.window);
        auto join = exec::seq_join(pool_, plan_.window, source, split_and_write, tracer.observe({}));
        for (auto const& written : join) {
            input_checksum += written.checksum;
            skipped_rows += written.skipped_rows;
            progress.advance(written.progress);
        }
    }
    for (auto& writer : writers_) {
        MutexLock lock(writer->mutex);
        writer->file->close();
    }
    writers_.clear();
    progress.finish();
    auto const partitioned = Clock::now();

    progress.start("verify", input_checksum.rows, Progress::Unit::items);
    auto csv_options = csv_input_ ? csv_input_->options : table::CsvOptions();
    csv_options.bad_rows = table::CsvOptions::BadRows::fail;
    auto read_back = [&, next_file = std::size_t{0},
                      reader = std::unique_ptr<io::TableFileReader>()]() mutable -> std::optional<FileTable> {
        while (true) {
            if (!reader) {
                if (next_file == output_files_.size()) {
                    return std::nullopt;
                }
                reader = io::open_table_file(output_files_[next_file++], output_format_, csv_options, schema());
            }
            if (auto table = reader->read()) {
                return FileTable{next_file - 1, std::move(*table)};
            }
            reader.reset();
        }
    };
    auto const check = [&](FileTable read, std::stop_token const&) {
        TableCheck result{table::TableChecksum::of(read.table), 0, read.table.num_rows()};
        for (auto const partition : table::partition_rows(read.table, keys(), partitions_)) {
            result.misplaced_rows += partition == read.file ? 0 : 1;
        }
        return result;
    };
    table::TableChecksum output_checksum;
    std::uint64_t misplaced_rows = 0;
    {
        SeqJoinTracer tracer("check table", plan_.window);
        auto join = exec::seq_join(pool_, plan_.window, std::move(read_back), check, tracer.observe({}));
        for (auto const& result : join) {
            output_checksum += result.checksum;
            misplaced_rows += result.misplaced_rows;
            progress.advance(result.rows);
        }
    }
    progress.finish();
    auto const finished = Clock::now();

    RunSummary summary;
    summary.command = "partition";
    summary.settings["inputs"] = csv_input_ ? csv_input_->files.size() : table_input_->files.size();
    summary.settings["input_format"] = io::to_string(csv_input_ ? io::FileFormat::csv : table_input_->format);
    summary.settings["output_format"] = io::to_string(output_format_);
    if (output_format_ != io::FileFormat::csv) {
        summary.settings["compression"] = compression_;
    }
    summary.settings["keys"] = key_names_;
    summary.settings["partitions"] = partitions_;
    summary.settings["output"] = output_.string();
    summary.settings["threads"] = pool_.concurrency();
    plan_.describe(summary.settings);
    summary.rows = input_checksum.rows;
    if (csv_input_ && csv_input_->options.bad_rows == table::CsvOptions::BadRows::skip) {
        summary.skipped_rows = skipped_rows;
    }
    summary.bytes = input_bytes;
    summary.seconds = std::chrono::duration<double>(finished - started).count();
    summary.phases = {{"partition", std::chrono::duration<double>(partitioned - started).count()},
                      {"verify", std::chrono::duration<double>(finished - partitioned).count()}};
    summary.peak_resident_bytes = peak_resident_bytes();
    bool const placed = misplaced_rows == 0;
    bool const complete = output_checksum == input_checksum;
    summary.verified = placed && complete;
    summary.verification.push_back(placed ? "every row is in the file of its key's partition"
                                          : std::to_string(misplaced_rows) + " rows are in the wrong file");
    summary.verification.push_back(complete ? "rows and checksum equal the input's: " + input_checksum.to_string()
                                            : "rows and checksum differ: input " + input_checksum.to_string()
                                                  + ", output " + output_checksum.to_string());
    if (*summary.verified) {
        staged_output_->commit();
    }
    return summary;
}

}  // namespace spillway::cli
