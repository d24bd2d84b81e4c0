#pragma once
/// @file
/// The exit codes of the `spillway` tool.

namespace spillway::cli {

/// How `spillway` ends. `spillway --help` lists these, and so does
/// docs/configuration.md.
///
/// The line between `usage` and `failure` is when the error is found: every
/// job first checks its flags, inputs, keys, directories and memory limit
/// (and fails with `usage` there), and only then starts the work (whose
/// errors are `failure`).
enum class ExitCode : int {
    /// The job ran, and its output was verified.
    success = 0,
    /// The job failed while running: an I/O error, a memory limit that could
    /// not be met, malformed input found on the way, a failed rank.
    failure = 1,
    /// The job did not start: a bad flag or value, a missing input, a key
    /// that is not a column, an unwritable directory, a memory limit too
    /// small to make progress.
    usage = 2,
    /// The job ran, but its output did not pass verification.
    verification_failed = 3,
    /// SIGINT (Ctrl-C) ended the job; what it had written was removed
    /// (`InterruptionHandler`). 128 + SIGINT, as a shell reports it.
    interrupted = 130,
    /// SIGTERM ended the job; what it had written was removed. 128 + SIGTERM.
    terminated = 143,
};

/// The value `main` returns for `code`.
[[nodiscard]] constexpr int to_int(ExitCode code) noexcept { return static_cast<int>(code); }

}  // namespace spillway::cli
