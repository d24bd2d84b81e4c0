#include "tpch_job.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/memory/memory_config.hpp>
#include <spillway/shuffle/all_gather.hpp>
#include <spillway/shuffle/shuffle_config.hpp>
#include <spillway/table/date32.hpp>
#include <spillway/table/timestamp.hpp>

#include "job_limits.hpp"
#include "option_flags.hpp"
#include "rank_values.hpp"

namespace spillway::cli {
namespace {

using Clock = std::chrono::steady_clock;

/// Row `row` of `table` as JSON values: numbers, strings, dates as
/// `YYYY-MM-DD`, nulls.
nlohmann::ordered_json json_row(table::Table const& table, std::size_t row) {
    auto values = nlohmann::ordered_json::array();
    for (auto const& column : table.columns()) {
        if (column.is_null(row)) {
            values.push_back(nullptr);
            continue;
        }
        switch (column.type()) {
            case table::DataType::int32: values.push_back(column.values<std::int32_t>()[row]); break;
            case table::DataType::int64: values.push_back(column.values<std::int64_t>()[row]); break;
            case table::DataType::float64: values.push_back(column.values<double>()[row]); break;
            case table::DataType::string: values.push_back(std::string(column.string(row))); break;
            case table::DataType::date32: {
                char text[table::max_date32_chars];
                auto const length = table::format_date32(column.values<std::int32_t>()[row], text);
                values.push_back(std::string(text, length));
                break;
            }
            case table::DataType::boolean: values.push_back(column.values<std::uint8_t>()[row] != 0); break;
            case table::DataType::timestamp_ms:
            case table::DataType::timestamp_us:
            case table::DataType::timestamp_ns:
            case table::DataType::timestamp_ms_utc:
            case table::DataType::timestamp_us_utc:
            case table::DataType::timestamp_ns_utc: {
                char text[table::max_timestamp_chars];
                auto const length = table::format_timestamp(column.values<std::int64_t>()[row], column.type(), text);
                values.push_back(std::string(text, length));
                break;
            }
        }
    }
    return values;
}

/// The size of the splits a `.tbl` file of `--data` is read in: about
/// 30,000 line items, as many as a chunk of the generator's (8,192 orders).
constexpr std::uint64_t tbl_split_bytes = std::uint64_t{4} << 20;

/// The op id of the all-gather of every rank's figures: the queries' own
/// collectives take op ids 0 to 15.
constexpr shuffle::OpId figures_op = 16;

/// What one rank read, and its memory's figures.
struct RankFigures {
    std::uint64_t rows = 0;
    std::uint64_t bytes = 0;
    RankMemoryFigures memory;
};

}  // namespace

TpchJob::TpchJob(TpchArguments arguments, Options const& options)
    : arguments_(arguments),
      generator_(positive_number_option(options, "scale", 1, table::TpchGenerator::max_scale),
                 static_cast<std::uint64_t>(options.get_int("seed", 0, 0, INT64_MAX))),
      ranks_(options, memory::MemoryConfig::from_options(options), 1),
      pool_(exec::ThreadPool::Config::from_options(options)) {
    tpch::check_implemented(arguments_.query);
    if (!arguments_.data.empty()) {
        for (auto const table : table::all_tpch_tables) {
            auto const name = arguments_.data / std::string(table::to_string(table));
            auto const parquet = std::filesystem::path(name).concat(".parquet");
            auto const tbl = std::filesystem::path(name).concat(".tbl");
            auto const expected = table::TpchGenerator::schema(table);
            if (!std::filesystem::is_regular_file(parquet) && std::filesystem::is_regular_file(tbl)) {
                files_[table] = {.path = tbl,
                                 .parquet = nullptr,
                                 .tbl = std::make_unique<io::CsvSplits>(tbl, io::CsvOptions::tbl(), expected,
                                                                        tbl_split_bytes)};
                continue;
            }
            SPILLWAY_EXPECTS(std::filesystem::is_regular_file(parquet),
                             "no file " << parquet.string() << " or " << tbl.string() << " for table "
                                        << table::to_string(table)
                                        << "; spillway generate --tables all -o DIR (with --output-format parquet "
                                           "or without) writes all eight into a new or empty directory DIR",
                             InvalidArgument);
            auto groups = std::make_unique<io::ParquetRowGroups>(parquet);
            for (auto const& field : expected.fields()) {
                auto const index = groups->schema().find(field.name);
                SPILLWAY_EXPECTS(index && groups->schema().field(*index).type == field.type,
                                 parquet.string() << " has " << (index ? "" : "no column ") << field.name
                                               << (index ? " of type " : "")
                                               << (index ? table::to_string(groups->schema().field(*index).type)
                                                         : std::string_view())
                                               << "; TPC-H " << table::to_string(table) << " needs " << field.name
                                               << " of type " << table::to_string(field.type),
                                 InvalidArgument);
            }
            files_[table] = {.path = parquet, .parquet = std::move(groups), .tbl = nullptr};
        }
    }
    config_.workers = std::max<std::size_t>(1, pool_.concurrency() / ranks_.resources().size());
    config_.partitions =
        static_cast<shuffle::PartitionId>(options.get_int("partitions", 32, 1, max_partitions));
    config_.shuffle = shuffle::ShuffleConfig::from_options(options);
}

RunSummary TpchJob::run(Progress& progress) {
    auto const started = Clock::now();
    auto source = tpch::generated_tables(generator_);
    if (!files_.empty()) {
        source = {.num_chunks = [this](table::TpchTable table) { return files_.at(table).chunks(); },
                  .chunk = [this](table::TpchTable table, std::size_t index, std::span<std::string const> columns) {
                      auto const& file = files_.at(table);
                      auto chunk = file.read(index, columns);
                      // The queries take every value as given, as TPC-H's columns are NOT NULL.
                      for (std::size_t column = 0; column < chunk.num_columns(); ++column) {
                          SPILLWAY_EXPECTS(chunk.column(column).null_count() == 0,
                                           file.path.string()
                                               << " has nulls in " << chunk.schema().field(column).name << " ("
                                               << (file.parquet ? "row group " : "split ") << index
                                               << "); TPC-H's columns are NOT NULL",
                                           CorruptData);
                      }
                      return chunk;
                  }};
    }
    auto const local_ranks = ranks_.resources().size();
    std::vector<table::Table> answers(local_ranks);  // each rank's copy of the whole answer
    std::vector<std::vector<RankFigures>> gathered(local_ranks);  // each rank's copy of every rank's
    progress.start("query " + std::to_string(arguments_.query) + " (tables read)", 0, Progress::Unit::bytes);
    ranks_.run([&](comm::Communicator& communicator) {
        auto const local = static_cast<std::size_t>(communicator.rank() - ranks_.first_rank());
        auto& resource = communicator.buffer_resource();
        // Made before the query: while it exists, a rank that finishes first
        // and waits for the others' figures is known to be alive.
        shuffle::AllGather gather(communicator, figures_op, resource, config_.shuffle);
        std::atomic<std::uint64_t> rows{0};
        std::atomic<std::uint64_t> bytes{0};
        tpch::TableSource const counted{
            .num_chunks = source.num_chunks,
            .chunk = [&](table::TpchTable table, std::size_t chunk, std::span<std::string const> columns) {
                auto result = source.chunk(table, chunk, columns);
                rows.fetch_add(result.num_rows(), std::memory_order_relaxed);  // a total; no ordering needed
                bytes.fetch_add(result.byte_size(), std::memory_order_relaxed);
                progress.advance(result.byte_size());
                return result;
            }};
        answers[local] = tpch::run_query(arguments_.query, communicator, pool_, counted, config_);
        RankFigures const figures{
            .rows = rows.load(std::memory_order_relaxed),
            .bytes = bytes.load(std::memory_order_relaxed),
            .memory = RankMemoryFigures::of(resource),
        };
        gathered[local] = gather_values(gather, resource, figures);
    });
    progress.finish();
    auto const answered = Clock::now();

    RunSummary summary;
    summary.command = "tpch";
    summary.settings["query"] = arguments_.query;
    summary.settings["ranks"] = ranks_.size();
    summary.settings["comm"] = ranks_.uses_mpi() ? "mpi" : "local";
    summary.settings["threads"] = pool_.concurrency();
    summary.settings["partitions"] = config_.partitions;
    summary.settings["codec"] = std::string(memory::to_string(ranks_.resources().front()->config().spill_codec));
    if (files_.empty()) {
        summary.settings["scale"] = generator_.scale();
        summary.settings["seed"] = generator_.seed();
    } else {
        summary.settings["data"] = arguments_.data.string();
    }
    QueryAnswer answer;
    auto const& table = answers.front();
    for (auto const& field : table.schema().fields()) {
        answer.columns.push_back(field.name);
    }
    for (std::size_t row = 0; row < table.num_rows(); ++row) {
        answer.rows.push_back(json_row(table, row));
    }
    summary.answer = std::move(answer);
    answers.clear();  // their storage is the ranks' resources', released below
    std::vector<RankMemoryFigures> memory;
    for (auto const& figures : gathered.front()) {
        summary.rows += figures.rows;
        summary.bytes += figures.bytes;
        memory.push_back(figures.memory);
    }
    gathered.clear();
    ranks_.report_memory(summary, memory);
    summary.phases = {{"query", to_seconds(answered - started)}};
    ranks_.finish(summary, progress, started, answered);
    return summary;
}

}  // namespace spillway::cli
