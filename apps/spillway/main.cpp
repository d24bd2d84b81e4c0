// spillway: the command-line tool. `spillway --help` describes its commands,
// flags and exit codes; docs/configuration.md lists its options.

#include <malloc.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

#include <spillway/core/error.hpp>
#include <spillway/core/logging.hpp>
#include <spillway/core/options.hpp>

#include "command_line.hpp"
#include "distributed_partition_job.hpp"
#include "interruption.hpp"
#include "processes.hpp"
#include "run_job.hpp"
#include "run_summary.hpp"

namespace {

/// Whether the command given in `command_line`, with `options`, exchanges
/// rows between ranks: a `spillway shuffle`, or a job of a command with
/// `--ranks` on several ranks or over MPI (`runs_on_ranks`). A malformed
/// `ranks` or `comm` counts as exchanging; the job reports what is wrong
/// with it.
bool exchanges_rows(spillway::cli::CommandLine const& command_line, spillway::Options const& options) {
    try {
        return command_line.command() == "shuffle"
               || (command_line.has_flag("--ranks") && spillway::cli::runs_on_ranks(options));
    } catch (spillway::InvalidArgument const&) {
        return true;
    }
}

}  // namespace

int main(int argc, char** argv) {
    using namespace spillway::cli;
    // Blocks of 1 MiB or more are mapped on their own and unmapped when
    // freed. Left to itself, glibc raises this threshold to the size of each
    // mapped block freed and then carves such blocks out of its per-thread
    // heaps, which keep what is freed: the Arrow library's read and write
    // buffers, which no buffer resource counts, then held the process's peak
    // resident set 40% above a partition's memory limit (they come from the
    // library's own jemalloc now, where it has one: io/arrow_memory.hpp).
    // Not lower: zstd allocates a context of about 570 KiB for every
    // Parquet page it compresses, and mapped on its own, its pages were
    // faulted in and zeroed again each time. The heap keeps up to 16 MiB
    // free at its top for the same reason (docs/architecture.md).
    mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 16 * 1024 * 1024);
    InterruptionHandler interruptions;  // before any thread starts, MPI's included
    CommandLine command_line;
    if (auto const code = command_line.parse(argc, argv, std::cout, std::cerr)) {
        return to_int(*code);
    }
    auto const options = command_line.options();
    auto const usage_error = [&](std::string const& message) {
        std::cerr << "spillway: " + message + "\n";  // one write: other processes share the stream
        print_final_report([&] {
            if (command_line.output().json && launcher_rank() == 0) {
                std::cout << failure_json(command_line.command(), ExitCode::usage, message) << "\n";
            }
        });
        return to_int(ExitCode::usage);
    };
    // The library ignores a log level that names none, with a notice, when
    // it first reads the level (as any error does, to log itself); the tool
    // refuses it, before anything reads it.
    if (auto const level = options.find("log_level"); level && !spillway::log_level_named(level->text)) {
        return usage_error(spillway::Options::environment_variable("log_level") + "='" + level->text
                           + "' names no log level: expected " + std::string(spillway::log_level_choices));
    }
    // One heap for every thread of a job whose ranks exchange rows, unless
    // MALLOC_ARENA_MAX says otherwise. glibc gives each thread that
    // allocates a heap of its own (up to eight per core), and a heap keeps
    // what is freed in it for the threads that use it. A shuffle allocates
    // small chunks on some threads (packing, receiving, reading back) and
    // frees them on others, at different phases, so each heap grew to its
    // own peak: with 1000 partitions the process's peak resident set was the
    // sum of those peaks, 1.4 to 2.4 times the memory limit, against 1.2 to
    // 1.5 with one heap. A job on one rank exchanges none, and on one heap
    // its threads waited on the heap's lock (docs/architecture.md).
    if (std::getenv("MALLOC_ARENA_MAX") == nullptr && exchanges_rows(command_line, options)) {
        mallopt(M_ARENA_MAX, 1);
    }
    if (command_line.output().json && launcher_rank() == 0) {
        interruptions.report_on_stdout(
            failure_json(command_line.command(), ExitCode::interrupted, "interrupted by SIGINT") + "\n",
            failure_json(command_line.command(), ExitCode::terminated, "terminated by SIGTERM") + "\n"
        );
    }
    std::optional<Processes> processes;
    try {
        // A command without --comm (generate) runs as one process, whatever
        // SPILLWAY_COMM says.
        auto const over_mpi = command_line.has_flag("--comm")
                              && options.get_choice("comm", {"local", "mpi"}, "local") == "mpi";
        processes.emplace(options, over_mpi, &argc, &argv);
    } catch (std::exception const& error) {
        return usage_error(error.what());
    }
    auto const make_job = [&] { return command_line.make_job(options); };
    auto const for_users = [&](std::string message) { return command_line.name_flags(std::move(message)); };
    return to_int(run_job(make_job, command_line.command(), command_line.output(), *processes, std::cout, std::cerr,
                          for_users));
}
