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
};

}  // namespace spillway::cli
