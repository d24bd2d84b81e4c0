// spillway: the command-line tool. `spillway --help` describes its commands,
// flags and exit codes; docs/configuration.md lists its options.

#include <iostream>

#include "command_line.hpp"
#include "run_command.hpp"

int main(int argc, char** argv) {
    spillway::cli::CommandLine command_line;
    if (auto const code = command_line.parse(argc, argv, std::cout, std::cerr)) {
        return spillway::cli::to_int(*code);
    }
    return spillway::cli::to_int(spillway::cli::run_command(command_line, std::cout, std::cerr));
}
