// spillway: the command-line tool. `spillway --help` describes its commands,
// flags and exit codes; docs/configuration.md lists its options.

#include <iostream>

#include "command_line.hpp"
#include "run_job.hpp"

int main(int argc, char** argv) {
    using namespace spillway::cli;
    CommandLine command_line;
    if (auto const code = command_line.parse(argc, argv, std::cout, std::cerr)) {
        return to_int(*code);
    }
    auto const make_job = [&] { return command_line.make_job(command_line.options()); };
    return to_int(run_job(make_job, command_line.output(), std::cout, std::cerr));
}
