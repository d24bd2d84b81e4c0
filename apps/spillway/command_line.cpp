#include "command_line.hpp"

#include <algorithm>
#include <limits>
#include <string_view>

#include <spillway/core/error.hpp>
#include <spillway/table/tpch_generator.hpp>
#include <spillway/tpch/queries.hpp>

#include "input_files.hpp"
#include "job_limits.hpp"

#include "processes.hpp"
#include "run_summary.hpp"

namespace spillway::cli {
namespace {

constexpr char const* description =
    "spillway: memory-bounded, verified shuffles and repartitions of data larger than memory.";

constexpr char const* footer = R"(
Every option flag also reads the SPILLWAY_* environment variable shown with
it; the flag wins. Sizes take units: 512MiB, 2GiB, 1.5G (powers of 1024),
3GB (powers of 1000); --memory-limit also takes a percentage of RAM, 25%.
docs/configuration.md lists every option.

Exit codes:
  0  success: the job ran (and shuffle's and partition's output was verified)
  1  failure while running: I/O error, memory limit not met, malformed input
     found on the way, a failed rank; also a summary that cannot be written to
     standard output (a full disk, say), after the output was verified and kept
  2  usage error, found before any work starts: bad flag or value, missing
     input, key that is not a column, unwritable directory, memory limit too
     small for shuffle's or partition's plan (the message names the minimum;
     tpch's query fails with 1 instead, naming what it needed), and malformed
     input found in what the job reads to check it (a CSV file's header, a
     Parquet file's first part, an Arrow file's schema)
  3  the job ran but its output failed verification
  130, 143  SIGINT (Ctrl-C) or SIGTERM ended the job; what it had written (a
     partition's output, spilled data) was removed first)";

/// The items of the comma-separated lists `values` (names or paths), in order.
template <typename Item>
std::vector<Item> list_items(std::vector<Item> const& values) {
    std::vector<Item> items;
    for (auto const& value : values) {
        std::string const text(value);
        std::size_t start = 0;
        while (true) {
            auto const comma = text.find(',', start);
            items.emplace_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
            if (comma == std::string::npos) {
                break;
            }
            start = comma + 1;
        }
    }
    return items;
}

/// Refuses a comma-separated list with an empty item, which a stray comma
/// leaves ('a,', 'a,,b', ','), rather than drop the item silently.
CLI::Validator no_empty_items() {
    return CLI::Validator(
        [](std::string& value) -> std::string {
            auto const items = list_items(std::vector<std::string>{value});
            if (std::ranges::any_of(items, [](std::string const& item) { return item.empty(); })) {
                return "'" + value + "' has an empty item; separate the names with single commas";
            }
            return {};
        },
        "");
}

/// Refuses an empty path, which an unset shell variable leaves
/// (`--data "$DIR"`), rather than take it as not given; `what` is what the
/// path should name.
CLI::Validator named_path(std::string const& what) {
    return CLI::Validator(
        [what](std::string& value) -> std::string { return value.empty() ? "the path is empty; name " + what : ""; },
        "");
}

/// Adds `--threads`.
void add_threads_flag(CLI::App& command, OptionFlags& flags) {
    flags.add(command, "--threads", "threads", "N", "worker threads; 0 = one per hardware thread (default 0)",
              integer_value(0, 4096));
}

/// Adds `--threads` and `--window` (with `window_help`).
void add_execution_flags(CLI::App& command, OptionFlags& flags, std::string const& window_help) {
    add_threads_flag(command, flags);
    flags.add(command, "--window", "window", "N", window_help, integer_value(1, 1 << 20));
}

/// Adds `--ranks` (default `default_ranks` in-process ranks) and `--comm`
/// for the command named `name`.
void add_rank_flags(CLI::App& command, OptionFlags& flags, std::string const& name, int default_ranks) {
    flags.add(command, "--ranks", "ranks", "N",
              "in-process ranks (default " + std::to_string(default_ranks)
                  + "); with --comm mpi, the number of MPI processes, which is the default",
              integer_value(1, max_ranks));
    flags.add(command, "--comm", "comm", "NAME",
              "local: ranks are threads of this process; mpi: ranks are the processes of `mpirun -np N spillway "
                  + name + " --comm mpi` (default local)",
              choice_value({"local", "mpi"}));
}

/// Adds `--collective-timeout`.
void add_collective_timeout_flag(CLI::App& command, OptionFlags& flags) {
    flags.add(command, "--collective-timeout", "collective_timeout", "DURATION",
              "fail, naming the rank, when a rank sends nothing for this long: it has stopped, hangs or cannot "
              "be reached (default 60s; ranks that are only busy send heartbeats)",
              positive_duration_value());
}

/// Adds `--memory-limit`, whose default is `limit_default` (`too_small`
/// says what a limit too small for the job does), and `--reserve-timeout`.
void add_memory_flags(CLI::App& command, OptionFlags& flags, std::string const& limit_default,
                      std::string const& too_small = "too small a limit fails at once, naming the least that works") {
    flags.add(command, "--memory-limit", "memory_limit_host", "SIZE",
              "memory the job may use, e.g. 1GiB or 25% (default " + limit_default + "); " + too_small,
              size_or_percent_value());
    flags.add(command, "--reserve-timeout", "memory_reserve_timeout", "DURATION",
              "fail with OutOfMemory when work waiting for memory sees none freed or spilled for this long "
              "(default 30s; partition waits only on ranks)",
              positive_duration_value());
}

/// Adds `--spill-dir` and `--codec`.
void add_spill_flags(CLI::App& command, OptionFlags& flags) {
    flags.add(command, "--spill-dir", "spill_directory", "DIR",
              "where spilled data goes, in a directory of this process's own (default $TMPDIR, else /tmp)",
              any_value());
    flags.add(command, "--codec", "spill_codec", "NAME", "compression of spilled data: none, lz4 or zstd (default none)",
              choice_value({"none", "lz4", "zstd"}));
}

/// Adds the flags of the TPC-H generator.
void add_generator_flags(CLI::App& command, OptionFlags& flags, std::string const& scale_default) {
    flags.add(command, "--scale", "scale", "FACTOR",
              "TPC-H scale factor: 1 is 6 million line items, about 820 MB in memory and 740 MB as CSV (default "
                  + scale_default + ")",
              positive_number_value(table::TpchGenerator::max_scale));
    flags.add(command, "--seed", "seed", "N", "seed of the generated data (default 0)",
              integer_value(0, INT64_MAX));
}

/// Adds the flags that set the CSV dialect.
void add_csv_flags(CLI::App& command, OptionFlags& flags) {
    flags.add(command, "--delimiter", "csv_delimiter", "CHAR",
              "field separator, or 'tab' (default ',' and '|' for .tbl files)", any_value());
    flags.add(command, "--quote", "csv_quote", "CHAR", "quote character, or 'none' (default '\"', none for .tbl)",
              any_value());
    flags.add(command, "--header", "csv_header", "BOOL",
              "whether the first row names the columns (default true, false for .tbl)", bool_value());
}

}  // namespace

CommandLine::CommandLine() : app_(description, "spillway") {
    app_.require_subcommand(1, 1);
    app_.set_version_flag("--version", std::string("spillway ") + SPILLWAY_VERSION);
    app_.footer(footer);

    shuffle_command_ = app_.add_subcommand(
        "shuffle",
        "Generate TPC-H lineitem rows on every rank, shuffle them by l_orderkey between the ranks under a memory "
        "limit (spilling to disk), and verify what every rank received. With no flags: 4 in-process ranks, about "
        "1 GiB of data, a 512 MiB limit.");
    add_rank_flags(*shuffle_command_, flags_, "shuffle", 4);
    flags_.add(*shuffle_command_, "--partitions", "partitions", "P", "partitions to shuffle into (default 4 per rank)",
               integer_value(1, max_partitions));
    add_collective_timeout_flag(*shuffle_command_, flags_);
    add_generator_flags(*shuffle_command_, flags_, "1.3, about 1 GiB");
    add_memory_flags(*shuffle_command_, flags_, "512MiB for the process, shared by its ranks");
    add_spill_flags(*shuffle_command_, flags_);
    add_execution_flags(*shuffle_command_, flags_,
                        "generated and received chunks in flight per rank (default 2 per thread, shared by the "
                        "ranks)");
    add_output_flags(*shuffle_command_);

    generate_command_ = app_.add_subcommand(
        "generate",
        "Write TPC-H tables as CSV (.tbl files: TPC-H's '|' format), Parquet or Arrow IPC, in parallel, "
        "deterministic: the rows `spillway tpch` queries.");
    auto* table_option =
        generate_command_
            ->add_option("--table", generate_.table,
                         "one table, written to the file -o: part, supplier, partsupp, customer, orders, lineitem, "
                         "nation or region (default lineitem)")
            ->type_name("NAME")
            ->transform(CLI::IsMember(
                {"part", "supplier", "partsupp", "customer", "orders", "lineitem", "nation", "region"}, CLI::ignore_case
            ));
    generate_command_
        ->add_option("--tables", generate_.tables,
                     "tables (comma-separated), or all, each written as DIR/<table>.tbl (or .parquet, .arrow: "
                     "--output-format) into the directory -o, which must be new or empty")
        ->type_name("NAMES")
        ->check(no_empty_items())
        ->excludes(table_option);
    generate_command_
        ->add_option("--output,-o", generate_.output, "the file (--table) or directory (--tables) to write")
        ->type_name("PATH")
        ->required();
    generate_command_
        ->add_option("--output-format", generate_.output_format,
                     "csv, parquet or arrow (default: from the file's extension with --table; .tbl files with "
                     "--tables)")
        ->type_name("FORMAT")
        ->check(CLI::IsMember({"csv", "parquet", "arrow", "feather"}, CLI::ignore_case));
    add_generator_flags(*generate_command_, flags_, "1");
    add_execution_flags(*generate_command_, flags_, "chunks of about 4 MiB in flight (default 4 per thread)");
    add_csv_flags(*generate_command_, flags_);
    add_output_flags(*generate_command_);

    tpch_command_ = app_.add_subcommand(
        "tpch",
        "Run a TPC-H query over generated tables on one or more ranks under a memory limit (spilling to disk), and "
        "print its answer and a summary. Queries: " + tpch::implemented_queries_text() + ".");
    tpch_command_->add_option("--query", tpch_.query, "the TPC-H query's number")->type_name("N")->required();
    tpch_command_
        ->add_option("--data", tpch_.data,
                     "read the tables from DIR/<table>.parquet, or else DIR/<table>.tbl (spillway generate --tables "
                     "all -o DIR, with --output-format parquet or without) instead of generating them; --scale and "
                     "--seed are then ignored")
        ->type_name("DIR")
        ->check(named_path("a directory"));
    add_rank_flags(*tpch_command_, flags_, "tpch", 1);
    flags_.add(*tpch_command_, "--partitions", "partitions", "P",
               "partitions of each hash shuffle, across the ranks (default 32); a join holds one build partition "
               "in memory at a time",
               integer_value(1, max_partitions));
    add_generator_flags(*tpch_command_, flags_, "1");
    add_memory_flags(*tpch_command_, flags_, "80% of RAM",
                     "what cannot fit it fails with OutOfMemory; where nothing more can spill, the tables a "
                     "worker derives from a chunk go over it, and the summary says so");
    add_spill_flags(*tpch_command_, flags_);
    add_collective_timeout_flag(*tpch_command_, flags_);
    add_threads_flag(*tpch_command_, flags_);
    add_output_flags(*tpch_command_);

    partition_command_ = app_.add_subcommand(
        "partition",
        "Repartition Parquet, Arrow IPC or CSV files (or TPC-H .tbl) by the hash of key columns into one file per "
        "partition, under a memory limit (CSV to CSV copies rows verbatim); then read the files back to verify "
        "them. With --ranks N or --comm mpi, each rank reads a share of the files (Parquet by row group), the "
        "ranks shuffle the rows by key, spilling to disk, and each writes and verifies the partitions it owns.");
    partition_command_->add_option("--input,-i", partition_.inputs, "files to read, in order (comma-separated or "
                                                                     "repeated; quoted patterns such as '*.parquet' "
                                                                     "are expanded), all of one format")
        ->type_name("FILES")
        ->check(no_empty_items())
        ->required();
    partition_command_
        ->add_option("--key,-k", partition_.keys,
                     "key columns, by name or number from 0 (comma-separated); rows with equal keys share a file")
        ->type_name("COLS")
        ->check(no_empty_items())
        ->required();
    partition_command_->add_option("--output,-o", partition_.output,
                                   "directory for the files part-00000.csv (.parquet, .arrow; CSV from CSV keeps the "
                                   "input's extension, .tbl say, unless it names another format), "
                                   "...; made if missing, must be empty; "
                                   "the files appear in it only if the run verified them")
        ->type_name("DIR")
        ->required();
    flags_.add(*partition_command_, "--partitions", "partitions", "P", "number of partition files (default 64)",
               integer_value(1, max_partitions));
    add_rank_flags(*partition_command_, flags_, "partition", 1);
    add_collective_timeout_flag(*partition_command_, flags_);
    add_memory_flags(*partition_command_, flags_, "80% of RAM");
    add_spill_flags(*partition_command_, flags_);
    add_execution_flags(*partition_command_, flags_,
                        "blocks in flight (default: as many as fit the memory limit, up to 4 per thread)");
    flags_.add(*partition_command_, "--block-size", "csv_chunk_bytes", "SIZE",
               "bytes read at a time; no row may be longer (default 16MiB)", size_value());
    add_csv_flags(*partition_command_, flags_);
    partition_command_
        ->add_option("--schema", partition_.schema,
                     "column types, as column:type (int32, int64, float64, date32, string, boolean, timestamp_ms, "
                     "timestamp_us, timestamp_ns, or a timestamp with _utc; comma-separated); "
                     "columns not named are inferred from the first rows of the first file that has rows")
        ->type_name("COL:TYPE")
        ->delimiter(',');
    partition_command_
        ->add_option("--input-format", partition_.input_format,
                     "csv, parquet or arrow (an Arrow IPC file, i.e. Feather v2, or an IPC stream); default: from "
                     "the first input's extension (.parquet, .pq; .arrow, .feather, .ipc, .arrows; anything else is "
                     "CSV)")
        ->type_name("FORMAT")
        ->check(CLI::IsMember({"csv", "parquet", "arrow", "feather"}, CLI::ignore_case));
    partition_command_
        ->add_option("--output-format", partition_.output_format,
                     "csv, parquet or arrow for the partition files (default: the input's format)")
        ->type_name("FORMAT")
        ->check(CLI::IsMember({"csv", "parquet", "arrow", "feather"}, CLI::ignore_case));
    partition_command_
        ->add_option("--compression", partition_.compression,
                     "compression of Parquet and Arrow output: none, zstd, lz4, and for Parquet snappy or gzip "
                     "(default zstd)")
        ->type_name("CODEC")
        ->transform(CLI::IsMember({"none", "zstd", "lz4", "snappy", "gzip"}, CLI::ignore_case));
    flags_.add(*partition_command_, "--infer-rows", "csv_infer_rows", "N",
               "rows of the first file read to infer column types (default 1000)",
               integer_value(1, std::numeric_limits<std::int32_t>::max()));
    flags_.add(*partition_command_, "--bad-rows", "csv_bad_rows", "WHAT",
               "a row with the wrong number of fields: fail (default) stops the run naming its file and line; skip "
               "leaves it out and counts it in the summary",
               choice_value({"fail", "skip"}));
    add_output_flags(*partition_command_);
}

void CommandLine::add_output_flags(CLI::App& command) {
    command.add_flag("--json", output_.json,
                     "print the summary as one JSON object on stdout; \"verified\": true only if verification passed "
                     "(tpch's holds the answer as \"columns\" and \"rows\"); a failed run prints one too, with "
                     "\"exit_code\" and \"error\"");
    command.add_flag("--quiet,-q", output_.quiet,
                     "print no progress, and no summary unless --json (tpch still prints its answer)");
    command.add_option("--trace", output_.trace,
                       "write Chrome trace-event JSON (spills, sends, receives, work items) to FILE, also when the "
                       "run fails (not on a usage error, found before it starts); open it in ui.perfetto.dev. Under "
                       "MPI each process writes FILE with -rank<N> before its extension")
        ->type_name("FILE")
        ->check(named_path("a file"));
}

std::optional<ExitCode> CommandLine::parse(std::vector<std::string> const& arguments, std::ostream& out,
                                           std::ostream& err) {
    std::vector<char const*> argv{"spillway"};
    for (auto const& argument : arguments) {
        argv.push_back(argument.c_str());
    }
    return parse(static_cast<int>(argv.size()), argv.data(), out, err);
}

std::optional<ExitCode> CommandLine::parse(int argc, char const* const* argv, std::ostream& out, std::ostream& err) {
    // CLI11 forgets which flags an earlier parse saw; the values they were
    // stored into start again from their defaults here. (A parse that fails
    // stores only some of its values.)
    flags_.clear();
    output_ = {};
    partition_ = {};
    generate_ = {};
    tpch_ = {};
    try {
        // CLI11 says only "A subcommand is required" when no word names a
        // command, and when the first word is not one.
        auto const commands = app_.get_subcommands([](CLI::App const*) { return true; });
        auto const names_a_command = [&](std::string const& word) {
            return std::any_of(commands.begin(), commands.end(),
                               [&](CLI::App const* command) { return command->check_name(word); });
        };
        if (argc > 1 && argv[1][0] != '-' && !names_a_command(argv[1])) {
            throw CLI::ParseError("unknown command '" + std::string(argv[1])
                                      + "': the commands are shuffle, partition, generate and tpch",
                                  CLI::ExitCodes::ExtrasError);
        }
        if (std::none_of(argv + 1, argv + argc, [&](char const* word) {
                std::string_view const text(word);
                return names_a_command(word) || text == "--help" || text == "-h" || text == "--version";
            }))
        {
            throw CLI::ParseError("a command is required: shuffle, partition, generate or tpch",
                                  CLI::ExitCodes::RequiredError);
        }
        app_.parse(argc, argv);
        return std::nullopt;
    } catch (CLI::ParseError const& error) {
        if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
            app_.exit(error, out, err);  // --help or --version
            return ExitCode::success;
        }
        // Named as the tool's other errors are, in one write.
        err << std::string("spillway: ") + error.what() + "\nRun with --help for more information.\n" << std::flush;
        // The flag may come after the error, where parsing stopped.
        bool const json = std::any_of(argv + 1, argv + argc, [](char const* argument) {
            return std::string_view(argument) == "--json";
        });
        if (json && launcher_rank() == 0) {
            out << failure_json(command(), ExitCode::usage, error.what()) << "\n";
        }
        return ExitCode::usage;
    }
}

std::string CommandLine::command() const {
    for (auto const* command : {shuffle_command_, partition_command_, generate_command_, tpch_command_}) {
        if (command->parsed()) {
            return command->get_name();
        }
    }
    return {};
}

bool CommandLine::has_flag(std::string const& flag) const {
    for (auto const* command : {shuffle_command_, partition_command_, generate_command_, tpch_command_}) {
        if (command->parsed()) {
            return command->get_option_no_throw(flag) != nullptr;
        }
    }
    return false;
}

Options CommandLine::options() const {
    auto options = Options::from_environment();
    flags_.apply(options);
    return options;
}

std::unique_ptr<Job> CommandLine::make_job(Options const& options) const {
    if (shuffle_command_->parsed()) {
        return std::make_unique<ShuffleJob>(options);
    }
    if (partition_command_->parsed()) {
        auto arguments = partition_;
        arguments.inputs = expand_inputs(list_items(arguments.inputs));
        arguments.keys = list_items(arguments.keys);
        if (runs_on_ranks(options)) {
            return std::make_unique<DistributedPartitionJob>(std::move(arguments), options);
        }
        if (partitions_csv_verbatim(arguments)) {
            return std::make_unique<PartitionJob>(std::move(arguments), options);
        }
        return std::make_unique<TablePartitionJob>(std::move(arguments), options);
    }
    if (tpch_command_->parsed()) {
        return std::make_unique<TpchJob>(tpch_, options);
    }
    SPILLWAY_ASSERT(generate_command_->parsed(), "CLI11 requires one command");
    auto arguments = generate_;
    arguments.tables = list_items(arguments.tables);
    return std::make_unique<GenerateJob>(std::move(arguments), options);
}

}  // namespace spillway::cli
