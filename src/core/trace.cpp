#include <spillway/core/trace.hpp>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <spillway/core/error.hpp>
#include <spillway/core/mutex.hpp>

namespace spillway::trace {
namespace {

struct Event {
    char const* category;
    char const* name;
    std::int64_t start_us;
    std::int64_t duration_us;
    std::uint32_t thread;
    std::uint64_t bytes;
    std::uint64_t id;
};

/// Everything the recorder holds. `recording` is read without the lock on
/// the fast path; the events themselves are guarded by `mutex`.
struct Recorder {
    /// Relaxed: a span that races with start/stop may be kept or not; the
    /// events are published under `mutex`.
    std::atomic<bool> recording{false};
    Mutex mutex;
    std::vector<Event> events SPILLWAY_GUARDED_BY(mutex);
    std::vector<std::pair<std::uint32_t, std::string>> thread_names SPILLWAY_GUARDED_BY(mutex);
    std::size_t max_events SPILLWAY_GUARDED_BY(mutex) = 0;
    std::size_t dropped SPILLWAY_GUARDED_BY(mutex) = 0;
    std::chrono::steady_clock::time_point origin SPILLWAY_GUARDED_BY(mutex);
};

Recorder& recorder() {
    static Recorder instance;
    return instance;
}

/// A small, stable number for the calling thread; trace viewers show one
/// track per number.
std::uint32_t this_thread_number() noexcept {
    static std::atomic<std::uint32_t> next{1};
    // Relaxed: only uniqueness matters, which the atomic increment gives.
    thread_local std::uint32_t const number = next.fetch_add(1, std::memory_order_relaxed);
    return number;
}

std::int64_t microseconds(std::chrono::steady_clock::duration duration) {
    return std::chrono::duration_cast<std::chrono::microseconds>(duration).count();
}

/// Adds one complete event on the calling thread, or counts it as dropped
/// once `max_events` are kept.
void append(char const* category, char const* name, std::chrono::steady_clock::time_point start,
            std::chrono::steady_clock::time_point end, std::uint64_t bytes, std::uint64_t id) {
    auto& state = recorder();
    MutexLock lock(state.mutex);
    if (state.events.size() >= state.max_events) {
        ++state.dropped;
        return;
    }
    state.events.push_back(Event{category, name, microseconds(start - state.origin), microseconds(end - start),
                                 this_thread_number(), bytes, id});
}

}  // namespace

void start(std::size_t max_events) {
    auto& state = recorder();
    MutexLock lock(state.mutex);
    state.events.clear();
    state.thread_names.clear();
    state.max_events = max_events;
    state.dropped = 0;
    state.origin = std::chrono::steady_clock::now();
    state.recording.store(true, std::memory_order_relaxed);
}

void stop() noexcept {
    recorder().recording.store(false, std::memory_order_relaxed);
}

bool enabled() noexcept {
    return recorder().recording.load(std::memory_order_relaxed);
}

void name_this_thread(std::string_view name) {
    if (!enabled()) {
        return;
    }
    auto& state = recorder();
    MutexLock lock(state.mutex);
    state.thread_names.emplace_back(this_thread_number(), std::string(name));
}

Counts counts() {
    auto& state = recorder();
    MutexLock lock(state.mutex);
    return Counts{state.events.size(), state.dropped};
}

void write(std::filesystem::path const& path) {
    auto& state = recorder();
    nlohmann::json events = nlohmann::json::array();
    auto const process = static_cast<std::int64_t>(::getpid());
    {
        MutexLock lock(state.mutex);
        for (auto const& [thread, name] : state.thread_names) {
            events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", process},
                              {"tid", thread}, {"args", {{"name", name}}}});
        }
        for (auto const& event : state.events) {
            nlohmann::json args = nlohmann::json::object();
            if (event.bytes != 0) {
                args["bytes"] = event.bytes;
            }
            if (event.id != UINT64_MAX) {
                args["id"] = event.id;
            }
            events.push_back({{"ph", "X"}, {"cat", event.category}, {"name", event.name},
                              {"ts", event.start_us}, {"dur", event.duration_us},
                              {"pid", process}, {"tid", event.thread}, {"args", std::move(args)}});
        }
    }
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    SPILLWAY_EXPECTS(file.good(), "cannot open trace file '" << path.string() << "' for writing", IoError);
    errno = 0;  // what a failed write of the stream's sets, as it writes or as it closes
    file << nlohmann::json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
    file.close();
    auto const error = errno;
    SPILLWAY_EXPECTS(!file.fail(),
                     "cannot write trace file '" << path.string() << "'" << (error != 0 ? ": " : "")
                                                 << (error != 0 ? std::strerror(error) : ""),
                     IoError);
}

void record(char const* category, char const* name, std::chrono::steady_clock::time_point start,
            std::chrono::steady_clock::time_point end, std::uint64_t bytes, std::uint64_t id) {
    if (enabled()) {
        append(category, name, start, end, bytes, id);
    }
}

Span::Span(char const* category, char const* name) noexcept
    : category_(category), name_(name), recording_(enabled()) {
    if (recording_) {
        start_ = std::chrono::steady_clock::now();
    }
}

Span::~Span() {
    if (recording_) {
        append(category_, name_, start_, std::chrono::steady_clock::now(), bytes_, id_);
    }
}

}  // namespace spillway::trace
