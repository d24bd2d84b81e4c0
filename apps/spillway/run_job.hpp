#pragma once
/// @file
/// Runs a job of the `spillway` tool, and reports how it went.

#include <functional>
#include <memory>
#include <ostream>

#include "command_line.hpp"
#include "exit_code.hpp"
#include "job.hpp"

namespace spillway::cli {

/// Makes a job with `make_job` (an error there is `ExitCode::usage`), runs it
/// with progress on `err` (an error there is `ExitCode::failure`), and prints
/// its summary on `out`: as text, as JSON with `--json`, or not at all with
/// `--quiet`. Errors and a failed verification are printed on `err` whatever
/// the flags. Returns `success` if the output was verified (or the job has
/// nothing to verify), `verification_failed` if not.
[[nodiscard]] ExitCode run_job(std::function<std::unique_ptr<Job>()> const& make_job, OutputFlags const& output,
                               std::ostream& out, std::ostream& err);

}  // namespace spillway::cli
