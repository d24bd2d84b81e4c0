#pragma once
/// @file
/// A process-wide recorder of trace events in the Chrome trace-event format,
/// which opens in Perfetto (ui.perfetto.dev) and chrome://tracing.
///
/// Recording is off until `trace::start()`. While it is off, a `trace::Span`
/// costs one relaxed atomic load. While it is on, each finished span takes one
/// short lock; spans are meant for coarse work (a spill, a send, a work item),
/// not for per-byte loops.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace spillway::trace {

/// Starts recording, discarding earlier events. At most `max_events` events
/// are kept; later ones are counted as dropped, so memory stays bounded.
/// Thread-safe.
void start(std::size_t max_events = 1'000'000);

/// Stops recording. Events recorded so far are kept until the next `start`.
/// Thread-safe.
void stop() noexcept;

/// Whether events are being recorded. Thread-safe and cheap.
bool enabled() noexcept;

/// Names the calling thread in the trace (shown as the track name).
/// Thread-safe; cheap when recording is off.
void name_this_thread(std::string_view name);

/// Writes the recorded events as Chrome trace-event JSON to `path`.
/// @throws IoError naming `path` if the file cannot be written.
void write(std::filesystem::path const& path);

/// The number of events kept and dropped since the last `start`.
struct Counts {
    std::size_t kept = 0;
    std::size_t dropped = 0;
};

/// How many events were kept and dropped since the last `start`. Thread-safe.
Counts counts();

/// Records one complete event ("ph": "X") in `category` named `name` on the
/// calling thread, from `start` to `end`, with a byte count (0: none) and an
/// identifier (`UINT64_MAX`: none). For intervals whose ends are seen by
/// separate callbacks (a `seq_join` observer, say); `Span` is the scoped form.
/// Does nothing if recording is off. Requires: `category` and `name` point to
/// storage that outlives the recording (string literals in practice).
/// Thread-safe.
void record(char const* category, char const* name, std::chrono::steady_clock::time_point start,
            std::chrono::steady_clock::time_point end, std::uint64_t bytes = 0,
            std::uint64_t id = UINT64_MAX);

/// One complete event ("ph": "X"): a named interval on the calling thread,
/// from construction to destruction. Does nothing if recording is off when
/// it is constructed.
///
/// Requires: `category` and `name` point to storage that outlives the span
/// (string literals in practice). Not thread-safe; lives in one scope.
class Span {
  public:
    /// Opens a span in `category` (e.g. "spill", "send") named `name`.
    Span(char const* category, char const* name) noexcept;
    /// Records the span if it was opened while recording.
    ~Span();
    Span(Span const&) = delete;
    Span& operator=(Span const&) = delete;

    /// Attaches a byte count, shown as the argument `bytes`.
    void set_bytes(std::uint64_t bytes) noexcept { bytes_ = bytes; }
    /// Attaches an item or chunk identifier, shown as the argument `id`.
    void set_id(std::uint64_t id) noexcept { id_ = id; }

  private:
    char const* category_;
    char const* name_;
    std::chrono::steady_clock::time_point start_;
    std::uint64_t bytes_ = 0;
    std::uint64_t id_ = UINT64_MAX;  ///< UINT64_MAX: no id
    bool recording_;
};

}  // namespace spillway::trace
