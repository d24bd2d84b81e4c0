#pragma once
/// @file
/// Progress of a job's phases on stderr: a bar on a terminal, plain lines
/// otherwise, nothing with `--quiet`; or handed to a listener (the Python
/// package's progress callback).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <ostream>
#include <string>

#include <spillway/core/mutex.hpp>

namespace spillway::cli {

/// Reports how far each phase of a job has come.
///
/// A phase has a name, a total and a unit. Any thread may `advance` it; what
/// is printed is throttled: a bar redrawn in place at most every 100 ms, or a
/// line at every tenth of the total. `finish` prints the phase's last line.
///
/// Thread safety: `advance` may be called concurrently (one relaxed atomic
/// add, and a short lock when something is printed); `start` and `finish`
/// are externally synchronized with everything else.
class Progress {
  public:
    /// How progress is shown.
    enum class Style {
        bar,    ///< one line redrawn in place (a terminal)
        lines,  ///< a line per tenth of the total (a log, a pipe)
        none,   ///< nothing (`--quiet`)
        listener,  ///< calls a `Listener` as often as a bar is redrawn, and at `finish`
    };
    /// What a phase counts.
    enum class Unit { bytes, items };

    /// `none` if `quiet`, else `bar` if `descriptor` is a terminal, else `lines`.
    [[nodiscard]] static Style choose(bool quiet, int descriptor) noexcept;

    /// What a listener is told: the phase, its units done, its total (0:
    /// unknown), whether it counts bytes, and whether this is its last call
    /// for the phase (from `finish`). Called under the reporter's own lock
    /// (one call at a time, so it must not call the reporter), on whichever
    /// thread advanced the phase.
    using Listener = std::function<void(std::string const& phase, std::uint64_t done, std::uint64_t total,
                                        bool bytes, bool last)>;

    /// Prints to `out`, which must outlive the reporter.
    /// Requires: `style` is not `listener`.
    Progress(Style style, std::ostream& out) noexcept : style_(style), out_(out) {}
    /// Reports to `listener` instead of printing.
    explicit Progress(Listener listener) noexcept
        : style_(Style::listener), out_(std::cerr), listener_(std::move(listener)) {}

    /// Starts phase `name` of `total` units (0: unknown).
    void start(std::string name, std::uint64_t total, Unit unit);
    /// Counts `amount` more units done in the current phase.
    void advance(std::uint64_t amount);
    /// Counts the current phase done up to its total: for work that is over
    /// and held units no step counted (the header lines of CSV files).
    void complete();
    /// Ends the current phase, printing its final line.
    void finish();

  private:
    /// Prints the current state; a `bar` without a newline unless `last`.
    void print(std::uint64_t done, bool last) SPILLWAY_REQUIRES(print_mutex_);

    // Constant after construction.
    Style const style_;
    std::ostream& out_;
    Listener const listener_;

    // Set by `start`, read by `advance` (which `start` does not overlap).
    std::string name_;
    std::uint64_t total_ = 0;
    Unit unit_ = Unit::items;
    std::chrono::steady_clock::time_point started_;

    /// Units done in the current phase. Relaxed: a count for display only.
    std::atomic<std::uint64_t> done_{0};

    Mutex print_mutex_;
    std::chrono::steady_clock::time_point last_print_ SPILLWAY_GUARDED_BY(print_mutex_);
    std::uint64_t printed_tenths_ SPILLWAY_GUARDED_BY(print_mutex_) = 0;
};

}  // namespace spillway::cli
