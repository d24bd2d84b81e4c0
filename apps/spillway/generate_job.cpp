#include "generate_job.hpp"

#include <chrono>
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
      csv_(table::CsvOptions::from_options(
          options, arguments_.output.extension() == ".tbl" ? table::CsvOptions::tbl() : table::CsvOptions())),
      pool_(exec::ThreadPool::Config::from_options(options)),
      window_(static_cast<std::size_t>(options.get_int(
          "window", chunks_per_thread * static_cast<std::int64_t>(pool_.concurrency()), 1, 1 << 20))),
      output_(arguments_.output) {
    SPILLWAY_EXPECTS(arguments_.table == "lineitem" || arguments_.table == "orders",
                     "unknown table '" << arguments_.table << "': expected lineitem or orders", InvalidArgument);
    auto const schema = arguments_.table == "lineitem" ? table::TpchGenerator::lineitem_schema()
                                                       : table::TpchGenerator::orders_schema();
    writer_ = std::make_unique<table::CsvWriter>(output_.staging(), csv_, schema);
}

RunSummary GenerateJob::run(Progress& progress) {
    auto const started = std::chrono::steady_clock::now();
    bool const lineitem = arguments_.table == "lineitem";
    auto const generate_chunk = [&](std::size_t chunk, std::stop_token const&) {
        auto const table = lineitem ? generator_.lineitem(chunk) : generator_.orders(chunk);
        CsvChunk result{{}, table.num_rows()};
        table::append_csv_rows(table, csv_, result.text);
        return result;
    };
    std::uint64_t rows = 0;
    progress.start("generate", generator_.num_chunks(), Progress::Unit::items);
    {
        SeqJoinTracer tracer("generate chunk", window_);
        auto join = exec::seq_join(pool_, window_, chunk_numbers(0, 1, generator_.num_chunks()),
                                   generate_chunk, tracer.observe({}));
        for (auto& chunk : join) {
            writer_->write_rows(chunk.text);
            rows += chunk.rows;
            progress.advance(1);
        }
    }
    writer_->close();
    output_.commit();
    progress.finish();

    RunSummary summary;
    summary.command = "generate";
    summary.settings["table"] = arguments_.table;
    summary.settings["scale"] = generator_.scale();
    summary.settings["output"] = arguments_.output.string();
    summary.settings["threads"] = pool_.concurrency();
    summary.settings["window"] = window_;
    summary.rows = rows;
    summary.bytes = writer_->bytes_written();
    summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    summary.phases = {{"generate", summary.seconds}};
    summary.peak_resident_bytes = peak_resident_bytes();
    return summary;
}

}  // namespace spillway::cli
