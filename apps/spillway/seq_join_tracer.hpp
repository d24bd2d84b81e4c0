#pragma once
/// @file
/// Trace events for the items of a `seq_join`, through its observer.

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include <spillway/exec/seq_join_options.hpp>

namespace spillway::cli {

/// Turns the `started` and `finished` calls of a `seq_join` observer into one
/// trace event per item (category `seq_join`), with the item's index as its
/// id, while tracing is on.
///
/// Thread safety: the observer it installs may be called concurrently, as
/// `seq_join` calls it. Each item's start time sits in slot `index % window`:
/// the items in flight are fewer than `window` consecutive indices, so no two
/// share a slot, and an item's two calls are ordered by the join (same thread,
/// or a task resumed after the first).
class SeqJoinTracer {
  public:
    /// A tracer for a join of `window` items named `name`, whose options
    /// report a window stalled for `stall_timeout` (0: never).
    /// Requires: `name` outlives the trace (a string literal); `window > 0`.
    SeqJoinTracer(char const* name, std::size_t window, std::chrono::nanoseconds stall_timeout);

    /// The join's options: the stall timeout, one item per task, nothing
    /// pulled past the window (the tool's memory plans count the window's
    /// items and no more), and, if tracing is on, an observer that records
    /// its items. The tracer must outlive the join.
    [[nodiscard]] exec::SeqJoinOptions observe();

  private:
    char const* name_;
    std::chrono::nanoseconds stall_timeout_;
    std::vector<std::chrono::steady_clock::time_point> started_;  ///< by index % window
};

}  // namespace spillway::cli
