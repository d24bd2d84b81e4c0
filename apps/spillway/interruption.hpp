#pragma once
/// @file
/// What SIGINT and SIGTERM do to the `spillway` tool: remove what the run has
/// written so far, then end the process with 128 + the signal's number.

#include <signal.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

namespace spillway::cli {

/// Handles SIGINT and SIGTERM while it lives. It blocks them in the calling
/// thread, and so in every thread started after it, and waits for them on a
/// thread of its own. When one arrives, that thread prints a line naming it
/// on stderr, removes every path registered with `RemoveOnInterruption` (the
/// last registered first), and ends the process with `_exit(128 + signal)`:
/// `ExitCode::interrupted` (130) for SIGINT, `ExitCode::terminated` (143) for
/// SIGTERM.
///
/// The process's other threads run on while the paths are removed; what they
/// then fail to write or read no longer matters, and stderr is pointed at
/// /dev/null after that line so their complaints are not shown. A process
/// killed with SIGKILL removes nothing: the next run removes what it left
/// (see `StagedOutput` and the stale spill directories of
/// `memory::BufferResource`).
///
/// Requires: made by `main` before any other thread starts, once per process.
/// Thread safety: owned by `main`'s thread.
class InterruptionHandler {
  public:
    /// Blocks SIGINT and SIGTERM in this thread and starts the waiting thread.
    InterruptionHandler();
    /// Stops the waiting thread and restores this thread's signal mask, so a
    /// signal that arrives afterwards has its default effect. While a signal
    /// is being handled, never returns: the handling thread ends the process.
    ~InterruptionHandler();
    InterruptionHandler(InterruptionHandler const&) = delete;
    InterruptionHandler& operator=(InterruptionHandler const&) = delete;

    /// Has a signal that ends the process print `on_sigint` or `on_sigterm`
    /// on stdout, once the paths are removed: the failure object that
    /// `--json` promises.
    void report_on_stdout(std::string on_sigint, std::string on_sigterm);

  private:
    sigset_t previous_mask_{};
    std::thread waiter_;
};

/// Returns at once, unless a signal is being handled: then it blocks until
/// the handling ends the process. A job's failure is reported after it, as
/// the failure may be only the handler removing the job's files under it,
/// and the signal's own report is the one to print.
/// Must not be called from `RemoveOnInterruption::publish`'s work, which
/// holds the same lock.
void wait_out_interruption();

/// Clears the report a signal would print (`InterruptionHandler::
/// report_on_stdout`), then runs `print`, which prints what the run ended
/// with: a run prints one report, even if a signal comes while it tears
/// down. If a signal is being handled, blocks until that ends the process,
/// and `print` never runs: the signal's report is the one printed. A signal
/// that comes while `print` writes ends the process without a report and
/// may cut `print`'s short: the lock is not held while it writes, so that a
/// standard output that blocks never keeps a signal from removing the run's
/// files. Not from `publish`'s work either.
void print_final_report(std::function<void()> const& print);

/// Removes every path registered with `RemoveOnInterruption`, newest first,
/// as a signal would, then runs `end`, which must end the process without
/// unwinding (`Processes::abort_job`); aborts if it returns. Whatever
/// publishes, registers or reports meanwhile blocks until the process ends.
/// Not from `publish`'s work.
[[noreturn]] void end_removing_registered_paths(std::function<void()> const& end);

/// A path that `InterruptionHandler` removes if a signal ends the process
/// while this object lives. Register a path before creating it, so that no
/// moment is left uncovered; a path that does not exist is skipped.
///
/// Thread safety: objects may be made and destroyed concurrently, on any
/// thread; each blocks while a signal is being handled (until the process
/// ends). The registry's lock is a leaf in docs/architecture.md's lock order.
class RemoveOnInterruption {
  public:
    /// What is removed.
    enum class Extent {
        everything,       ///< the path and, if it is a directory, all that it holds
        empty_directory,  ///< the directory, if it is empty by then
    };

    /// Registers `path`.
    explicit RemoveOnInterruption(std::filesystem::path path, Extent extent = Extent::everything);
    /// Registers the path that `make` creates and returns, running `make`
    /// with interruptions held off: for a path whose name is known only once
    /// it exists (a buffer resource's spill directory). `make` runs on the
    /// calling thread, holding the registry's lock: it must not make or
    /// destroy a `RemoveOnInterruption`. If it throws, nothing is registered.
    explicit RemoveOnInterruption(std::function<std::filesystem::path()> const& make,
                                  Extent extent = Extent::everything);
    /// Unregisters the path (leaving it in place).
    ~RemoveOnInterruption();
    RemoveOnInterruption(RemoveOnInterruption const&) = delete;
    RemoveOnInterruption& operator=(RemoveOnInterruption const&) = delete;

    /// Runs `work` with interruptions held off, then unregisters the path if
    /// `work` returned: for work that makes what the path holds final, such
    /// as moving it to where it stays. A signal that arrives meanwhile is
    /// handled after `work` ends, and no longer removes the path. If `work`
    /// throws, the path stays registered and the exception propagates.
    /// `work` runs on the calling thread, holding the registry's lock: it must
    /// not make or destroy a `RemoveOnInterruption`.
    /// Requires: the path is registered (`publish` has not returned before).
    void publish(std::function<void()> const& work);

  private:
    std::uint64_t id_ = 0;   ///< the path's key in the registry, while `registered_`
    bool registered_ = true;
};

}  // namespace spillway::cli
