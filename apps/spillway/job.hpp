#pragma once
/// @file
/// The interface every command of the `spillway` tool implements.

#include "progress.hpp"
#include "run_summary.hpp"

namespace spillway::cli {

/// One run of a command. Constructing a job checks everything it needs
/// before any work starts (flags, inputs, keys, directories, the memory
/// limit), so a `spillway::Error` from a constructor is a usage error
/// (`ExitCode::usage`); `run` then does the work, and an error from it is a
/// failure (`ExitCode::failure`).
///
/// Thread safety: externally synchronized; `run` is called once.
class Job {
  public:
    virtual ~Job() = default;

    /// Does the work, reporting each phase to `progress`, and returns what
    /// happened, including whether the output passed verification.
    /// @throws spillway::Error if the work fails.
    [[nodiscard]] virtual RunSummary run(Progress& progress) = 0;

    /// Moves the output `run` wrote into place if it passed verification;
    /// does nothing for a job that writes none. Called once, after `run`
    /// returned and this process's trace was written, so that a run that
    /// fails until then in this process leaves no output. (Over MPI, only
    /// once every process's run and trace succeeded: `run_job`.)
    /// @throws spillway::Error if the output cannot be moved.
    virtual void commit() {}
};

}  // namespace spillway::cli
