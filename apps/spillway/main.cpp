// spillway: the command-line tool. `spillway --help` describes its commands,
// flags and exit codes; docs/configuration.md lists its options.

#include <exception>
#include <iostream>
#include <optional>

#include "command_line.hpp"
#include "interruption.hpp"
#include "processes.hpp"
#include "run_job.hpp"
#include "run_summary.hpp"

int main(int argc, char** argv) {
    using namespace spillway::cli;
    InterruptionHandler interruptions;  // before any thread starts, MPI's included
    CommandLine command_line;
    if (auto const code = command_line.parse(argc, argv, std::cout, std::cerr)) {
        return to_int(*code);
    }
    if (command_line.output().json && launcher_rank() == 0) {
        interruptions.report_on_stdout(
            failure_json(command_line.command(), ExitCode::interrupted, "interrupted by SIGINT") + "\n",
            failure_json(command_line.command(), ExitCode::terminated, "terminated by SIGTERM") + "\n"
        );
    }
    auto const options = command_line.options();
    std::optional<Processes> processes;
    try {
        processes.emplace(options, &argc, &argv);
    } catch (std::exception const& error) {
        std::cerr << "spillway: " << error.what() << "\n";
        if (command_line.output().json && launcher_rank() == 0) {
            std::cout << failure_json(command_line.command(), ExitCode::usage, error.what()) << "\n";
        }
        return to_int(ExitCode::usage);
    }
    auto const make_job = [&] { return command_line.make_job(options); };
    auto const for_users = [&](std::string message) { return command_line.name_flags(std::move(message)); };
    return to_int(run_job(make_job, command_line.command(), command_line.output(), *processes, std::cout, std::cerr,
                          for_users));
}
