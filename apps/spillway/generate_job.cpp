#include "generate_job.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <limits>

#include <spillway/core/error.hpp>
#include <spillway/exec/seq_join.hpp>

#include "chunk_numbers.hpp"
#include "seq_join_tracer.hpp"

namespace spillway::cli {
namespace {

/// Chunks in flight per thread unless `window` says otherwise.
constexpr std::int64_t chunks_per_thread = 4;

/// One chunk as CSV text.
struct CsvChunk {
    std::string text;
    std::size_t rows = 0;
};

table::TpchGenerator make_generator(Options const& options) {
    auto const scale = options.get_double("scale", 1.0, 0.0, std::numeric_limits<double>::max());
    auto const seed = options.get_int("seed", 0, 0, INT64_MAX);
    return table::TpchGenerator(scale, static_cast<std::uint64_t>(seed));
}

}  // namespace

GenerateJob::GenerateJob(GenerateArguments arguments, Options const& options)
    : arguments_(std::move(arguments)),
      generator_(make_generator(options)),
      csv_(table::CsvOptions::from_options(options, !arguments_.tables.empty() || arguments_.output.extension() == ".tbl"
                                                        ? table::CsvOptions::tbl()
                                                        : table::CsvOptions())),
      pool_(exec::ThreadPool::Config::from_options(options)),
      window_(static_cast<std::size_t>(options.get_int(
          "window", chunks_per_thread * static_cast<std::int64_t>(pool_.concurrency()), 1, 1 << 20))) {
    std::vector<table::TpchTable> tables;
    if (arguments_.tables.empty()) {
        tables.push_back(table::parse_tpch_table(arguments_.table));
    } else if (arguments_.tables.size() == 1 && arguments_.tables.front() == "all") {
        tables.assign(std::begin(table::all_tpch_tables), std::end(table::all_tpch_tables));
    } else {
        for (auto const& name : arguments_.tables) {
            auto const table = table::parse_tpch_table(name);
            SPILLWAY_EXPECTS(std::find(tables.begin(), tables.end(), table) == tables.end(),
                             "table " << name << " is named twice", InvalidArgument);
            tables.push_back(table);
        }
    }
    if (arguments_.tables.empty()) {
        file_.emplace(arguments_.output);
        outputs_.push_back({tables.front(), std::make_unique<table::CsvWriter>(
                                                file_->staging(), csv_, table::TpchGenerator::schema(tables.front()))});
        return;
    }
    directory_.emplace(arguments_.output);
    for (auto const table : tables) {
        auto const file = directory_->staging() / (std::string(table::to_string(table)) + ".tbl");
        outputs_.push_back({table, std::make_unique<table::CsvWriter>(file, csv_, table::TpchGenerator::schema(table))});
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
            auto const table = generator_.table(output.table, chunk);
            CsvChunk result{{}, table.num_rows()};
            table::append_csv_rows(table, csv_, result.text);
            return result;
        };
        SeqJoinTracer tracer("generate chunk", window_);
        auto join = exec::seq_join(pool_, window_, chunk_numbers(0, 1, generator_.num_chunks(output.table)),
                                   generate_chunk, tracer.observe({}));
        for (auto& chunk : join) {
            output.writer->write_rows(chunk.text);
            rows += chunk.rows;
            progress.advance(1);
        }
        output.writer->close();
        bytes += output.writer->bytes_written();
    }
    if (file_) {
        file_->commit();
    } else {
        directory_->commit();
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
    summary.settings["scale"] = generator_.scale();
    summary.settings["output"] = arguments_.output.string();
    summary.settings["threads"] = pool_.concurrency();
    summary.settings["window"] = window_;
    summary.rows = rows;
    summary.bytes = bytes;
    summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    summary.phases = {{"generate", summary.seconds}};
    summary.peak_resident_bytes = peak_resident_bytes();
    return summary;
}

}  // namespace spillway::cli
