#pragma once
/// @file
/// A command of the `spillway` tool, run in this process for Python
/// (`spillway.partition`, ...), with its errors as exceptions.

#include <string>
#include <vector>

#include "progress.hpp"

namespace spillway::python {

/// Runs the `spillway` tool's command line `arguments` (without the program
/// name, `{"partition", "-i", ...}`) as the tool does, in this process, with
/// its progress reported to `progress`, and returns its summary as one JSON
/// object (`cli::RunSummary::to_json`; `exit_code` 3 and an `error` if the
/// output failed verification). Nothing is printed. Error messages name the
/// tool's flags, as its own do.
/// @throws InvalidArgument with the tool's message for a usage error (a bad
///         flag, `--help`, or what a job's constructor refuses); the job's
///         error, of its own `spillway::Error` type, if it fails while running.
[[nodiscard]] std::string run_command(std::vector<std::string> const& arguments, cli::Progress& progress);

}  // namespace spillway::python
