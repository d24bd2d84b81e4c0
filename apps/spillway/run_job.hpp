#pragma once
/// @file
/// Runs a job of the `spillway` tool, and reports how it went.

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "command_line.hpp"
#include "exit_code.hpp"
#include "job.hpp"
#include "processes.hpp"

namespace spillway::cli {

/// Creates the `--trace` file, then makes a job with `make_job` (an error in
/// either is `ExitCode::usage`, found before the job creates any output),
/// runs it with progress on `err` (an error there is `ExitCode::failure`),
/// and prints its summary on `out`: as text, as JSON with `--json`, or with
/// `--quiet` only a query's answer (`print_final_report`: one report, even
/// if a signal comes). The trace file is written if the job ran, whether it
/// succeeded or failed. Errors and a failed verification are printed on
/// `err` whatever the flags; a failure's message ends with the name of its
/// type where that is one of `core/error.hpp`'s (`... (OutOfMemory)`). Returns `success` if the output was verified
/// (or the job has nothing to verify), `verification_failed` if not, and
/// `usage` or `failure` for an error; a summary that cannot be written to
/// `out` makes a success a `failure`.
///
/// With `--json`, every outcome is one JSON object on `out`: the summary
/// (`RunSummary::to_json`) with the exit code, and with the failed
/// verification as its `error`; or, for a usage error or a failure,
/// `failure_json` of `command` and the error. (A signal that comes while
/// that object is written ends the process and may cut it short:
/// `print_final_report`.)
///
/// With several `processes` (an MPI job), every process calls this: they
/// agree that every one made its job before any runs it (so a usage error on
/// one process stops all), and that every one ran it and wrote its trace
/// before any commits its output (so a failure on one process leaves no
/// output and fails all), each prints its own errors prefixed with its rank,
/// and only process 0 prints progress, the summary and the JSON object. A
/// process whose run fails with `PeerTimeout` removes what it wrote and ends
/// the whole job (`Processes::abort_job`), since its sends to the silent
/// process would never complete.
/// `--trace FILE` then writes one file per process, `FILE` with `-rank<N>`
/// before its extension.
///
/// Every error message goes through `for_users` first (the tool names its
/// flags there instead of the options they set); unchanged if it is empty.
[[nodiscard]] ExitCode run_job(std::function<std::unique_ptr<Job>()> const& make_job, std::string const& command,
                               OutputFlags const& output, Processes const& processes, std::ostream& out,
                               std::ostream& err,
                               std::function<std::string(std::string)> const& for_users = {});

}  // namespace spillway::cli
