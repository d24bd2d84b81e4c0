#pragma once
/// @file
/// The options of `seq_join`, and what its observer and stall detector
/// report.

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <spillway/core/options.hpp>

namespace spillway::exec {

/// One item of a `seq_join` starting or finishing; see `SeqJoinOptions::observer`.
struct ItemEvent {
    enum class Phase { started, finished };

    std::size_t index;  ///< the item's position in the source, from 0
    Phase phase;
};

/// What the stall detector saw: for `stalled_for`, no item of the window
/// finished and the consumer took none, while some were unfinished.
struct StallReport {
    std::size_t window;
    /// The item the consumer takes next.
    std::size_t next_to_consume;
    /// Items handed to a thread that have not finished, in order.
    std::vector<std::size_t> running;
    /// Items admitted to the window that no thread has taken yet, in order.
    std::vector<std::size_t> queued;
    /// How long the window has made no progress (a multiple of the timeout).
    std::chrono::nanoseconds stalled_for;

    /// A message for people that names the pending items and the usual
    /// cause: an item waiting for one `window` or more places after it.
    [[nodiscard]] std::string to_string() const;
};

/// How `seq_join` batches, prefetches and watches its items.
struct SeqJoinOptions {
    /// Items per task: runs of `grain` consecutive items go to one thread
    /// and run there one after another, which amortizes the per-task cost
    /// for cheap items. Requires: 1 <= grain <= window. An item must not wait
    /// for a later item of its own batch.
    std::size_t grain = 1;

    /// Items a pump keeps pulled from the source beyond the window, on an
    /// executor thread, so a slow source is read while the consumer is busy.
    /// At most `window + prefetch` items are held at once. 0: no pump; the
    /// consumer pulls as it takes results.
    std::size_t prefetch = 0;

    /// When positive, a window that makes no progress (no item finishes, the
    /// consumer takes none) for this long while items are pending is
    /// reported, again after each further period without progress.
    std::chrono::nanoseconds stall_timeout{0};

    /// Receives stall reports; when empty they are logged at level `warn`.
    /// Runs on an executor thread with no lock of the join held; it may set
    /// events or close channels the stuck items wait for.
    std::function<void(StallReport const&)> on_stall;

    /// Called on the thread that runs an item, right before `fn` is called
    /// and right after it returns (for a `Task`, after the task finished),
    /// with no lock of the join held. Meant for tracing; must not throw and
    /// should be cheap.
    std::function<void(ItemEvent const&)> observer;

    /// Reads options `seq_join_grain` (positive integer), `seq_join_prefetch`
    /// (integer) and `seq_join_stall_timeout` (duration, `off` = 0); the
    /// callbacks stay empty.
    /// @throws InvalidArgument naming the option if a value is malformed.
    static SeqJoinOptions from_options(Options const& options);
};

}  // namespace spillway::exec
