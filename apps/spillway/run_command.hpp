#pragma once
/// @file
/// Runs the job a parsed command line asks for, and reports how it went.

#include <ostream>

#include "command_line.hpp"
#include "exit_code.hpp"

namespace spillway::cli {

/// Makes the job of `command_line` (an error there is `ExitCode::usage`),
/// runs it with progress on `err` (an error there is `ExitCode::failure`),
/// and prints its summary on `out`: as text, as JSON with `--json`, or not at
/// all with `--quiet`. Errors and a failed verification are printed on `err`
/// whatever the flags. Returns `success` if the output was verified (or the
/// job has nothing to verify), `verification_failed` if not.
[[nodiscard]] ExitCode run_command(CommandLine const& command_line, std::ostream& out, std::ostream& err);

}  // namespace spillway::cli
