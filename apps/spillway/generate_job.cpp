#include "generate_job.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <string_view>

#include <spillway/core/ascii_case.hpp>
#include <spillway/core/error.hpp>
#include <spillway/exec/seq_join.hpp>

#include "chunk_numbers.hpp"
#include "option_flags.hpp"
#include "seq_join_tracer.hpp"

namespace spillway::cli {
namespace {

/// Chunks in flight per thread unless `window` says otherwise.
constexpr std::int64_t chunks_per_thread = 4;

/// One chunk: as CSV text, or as a table for the other formats.
struct GeneratedChunk {
    std::string text;
    std::optional<table::Table> table;
    std::size_t rows = 0;
};

/// The format of the files: `output_format`, else the extension's (`--table`)
/// or CSV (`--tables`).
io::FileFormat format_of(GenerateArguments const& arguments) {
    if (!arguments.output_format.empty()) {
        return io::parse_file_format(arguments.output_format);
    }
    return arguments.tables.empty() ? io::format_of(arguments.output) : io::FileFormat::csv;
}

/// Row groups of about 4 MiB of column data: about one generated chunk.
io::WriteOptions write_options() {
    io::WriteOptions options;
    options.row_group_bytes = std::uint64_t{4} << 20;
    return options;
}

/// Whether `name` is `all`, in any case: every table.
bool is_all(std::string_view name) {
    return equals_ignoring_case(name, "all");
}

table::TpchGenerator make_generator(Options const& options) {
    auto const scale = positive_number_option(options, "scale", 1.0, table::TpchGenerator::max_scale);
    auto const seed = options.get_int("seed", 0, 0, INT64_MAX);
    return table::TpchGenerator(scale, static_cast<std::uint64_t>(seed));
}

}  // namespace

GenerateJob::GenerateJob(GenerateArguments arguments, Options const& options)
    : arguments_(std::move(arguments)),
      generator_(make_generator(options)),
      format_(format_of(arguments_)),
      csv_(io::CsvOptions::from_options(
          options, !arguments_.tables.empty() || io::is_tbl(arguments_.output) ? io::CsvOptions::tbl()
                                                                                         : io::CsvOptions()
      )),
      pool_(exec::ThreadPool::Config::from_options(options)),
      window_(static_cast<std::size_t>(options.get_int(
          "window", chunks_per_thread * static_cast<std::int64_t>(pool_.concurrency()), 1, 1 << 20))) {
    stall_timeout_ = options.get_duration("seq_join_stall_timeout", std::chrono::nanoseconds::zero());
    std::vector<table::TpchTable> tables;
    if (arguments_.tables.empty()) {
        tables.push_back(table::parse_tpch_table(arguments_.table));
    } else if (arguments_.tables.size() == 1 && is_all(arguments_.tables.front())) {
        tables.assign(std::begin(table::all_tpch_tables), std::end(table::all_tpch_tables));
    } else {
        for (auto const& name : arguments_.tables) {
            auto const table = table::parse_tpch_table(name);
            SPILLWAY_EXPECTS(std::find(tables.begin(), tables.end(), table) == tables.end(),
                             "table " << name << " is named twice", InvalidArgument);
            tables.push_back(table);
        }
    }
    auto const add_output = [&](table::TpchTable table, std::filesystem::path const& file) {
        auto const schema = table::TpchGenerator::schema(table);
        if (format_ == io::FileFormat::csv) {
            outputs_.push_back({table, std::make_unique<io::CsvWriter>(file, csv_, schema), nullptr});
        } else {
            outputs_.push_back({table, nullptr, io::create_table_file(file, format_, schema, write_options())});
        }
    };
    if (arguments_.tables.empty()) {
        SPILLWAY_EXPECTS(!io::names_compressed_file(arguments_.output),
                         "'" << arguments_.output.string() << "' names a compressed file, but spillway writes "
                             << io::to_string(format_) << " uncompressed (Parquet and Arrow compress inside the "
                             << "file); name the file without '" << arguments_.output.extension().string() << "'",
                         InvalidArgument);
        file_.emplace(arguments_.output);
        add_output(tables.front(), file_->staging());
        return;
    }
    directory_.emplace(arguments_.output);
    auto const extension = format_ == io::FileFormat::csv ? std::string_view(".tbl") : io::extension_of(format_);
    for (auto const table : tables) {
        add_output(table, directory_->staging() / (std::string(table::to_string(table)) + std::string(extension)));
    }
}

RunSummary GenerateJob::run(Progress& progress) {
    auto const started = std::chrono::steady_clock::now();
    std::size_t chunks = 0;
    for (auto const& output : outputs_) {
        chunks += generator_.num_chunks(output.table);
    }
    std::uint64_t rows = 0;
    std::uint64_t bytes = 0;
    progress.start("generate", chunks, Progress::Unit::items);
    for (auto const& output : outputs_) {
        auto const generate_chunk = [&](std::size_t chunk, std::stop_token const&) {
            auto table = generator_.table(output.table, chunk);
            GeneratedChunk result{{}, std::nullopt, table.num_rows()};
            if (output.csv) {
                io::append_csv_rows(table, csv_, result.text);
            } else {
                result.table = std::move(table);
            }
            return result;
        };
        SeqJoinTracer tracer("generate chunk", window_, stall_timeout_);
        auto join = exec::seq_join(pool_, window_, chunk_numbers(0, 1, generator_.num_chunks(output.table)),
                                   generate_chunk, tracer.observe());
        for (auto& chunk : join) {
            if (output.csv) {
                output.csv->write_rows(chunk.text);
            } else {
                output.file->write(std::move(*chunk.table));
            }
            rows += chunk.rows;
            progress.advance(1);
        }
        if (output.csv) {
            output.csv->close();
            bytes += output.csv->bytes_written();
        } else {
            output.file->close();
            bytes += output.file->bytes_written();
        }
    }
    progress.finish();

    RunSummary summary;
    summary.command = "generate";
    if (file_) {
        summary.settings["table"] = arguments_.table;
    } else {
        auto names = nlohmann::ordered_json::array();
        for (auto const& output : outputs_) {
            names.push_back(std::string(table::to_string(output.table)));
        }
        summary.settings["tables"] = names;
    }
    summary.settings["format"] = std::string(io::to_string(format_));
    summary.settings["scale"] = generator_.scale();
    summary.settings["output"] = arguments_.output.string();
    summary.settings["threads"] = pool_.concurrency();
    summary.settings["window"] = window_;
    summary.rows = rows;
    summary.bytes = bytes;
    summary.seconds = to_seconds(std::chrono::steady_clock::now() - started);
    summary.phases = {{"generate", summary.seconds}};
    summary.peak_resident_bytes = peak_resident_bytes();
    return summary;
}

void GenerateJob::commit() {
    if (file_) {
        file_->commit();
    } else {
        directory_->commit();
    }
}

}  // namespace spillway::cli
