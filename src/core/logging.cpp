#include <spillway/core/logging.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>

#include <spillway/core/ascii_case.hpp>
#include <spillway/core/error.hpp>
#include <spillway/core/mutex.hpp>
#include <spillway/core/options.hpp>

namespace spillway {
namespace {

constexpr std::array<std::string_view, 6> level_names{"trace", "debug", "info", "warn", "error", "off"};

/// The level the environment sets, or `warn`. Raises nothing: an error's
/// message is logged, and logging reads the level this initializes.
LogLevel level_from_environment() noexcept {
    auto const variable = Options::environment_variable("log_level");
    char const* const text = std::getenv(variable.c_str());
    if (text == nullptr) {
        return LogLevel::warn;
    }
    if (auto const level = log_level_named(text)) {
        return *level;
    }
    std::fprintf(stderr, "spillway: ignoring %s='%s': expected %.*s\n", variable.c_str(), text,
                 static_cast<int>(log_level_choices.size()), log_level_choices.data());
    return LogLevel::warn;
}

/// The level, read from the environment on first use. Relaxed ordering: the
/// level guards no other data, and a message racing a level change may go
/// either way.
std::atomic<LogLevel>& current_level() noexcept {
    static std::atomic<LogLevel> level{level_from_environment()};
    return level;
}

struct SinkState {
    Mutex mutex;
    LogSink sink SPILLWAY_GUARDED_BY(mutex);
};

SinkState& sink_state() {
    static SinkState state;
    return state;
}

void write_to_stderr(LogLevel level, std::string_view message) {
    auto const now = std::chrono::system_clock::now();
    auto const seconds = std::chrono::system_clock::to_time_t(now);
    auto const millis = std::chrono::duration_cast<std::chrono::milliseconds>(
                            now.time_since_epoch()
                        ).count()
                        % 1000;
    std::tm local{};
    localtime_r(&seconds, &local);
    char stamp[16];
    std::strftime(stamp, sizeof stamp, "%H:%M:%S", &local);
    std::fprintf(stderr, "[spillway %s %s.%03lld] %.*s\n", to_string(level).data(), stamp,
                 static_cast<long long>(millis), static_cast<int>(message.size()), message.data());
}

}  // namespace

std::optional<LogLevel> log_level_named(std::string_view text) noexcept {
    for (std::size_t i = 0; i < level_names.size(); ++i) {
        if (equals_ignoring_case(text, level_names[i])) {
            return static_cast<LogLevel>(i);
        }
    }
    return std::nullopt;
}

LogLevel parse_log_level(std::string_view text) {
    if (auto const level = log_level_named(text)) {
        return *level;
    }
    SPILLWAY_FAIL(
        "invalid log level '" << text << "': expected " << log_level_choices,
        InvalidArgument
    );
}

std::string_view to_string(LogLevel level) noexcept {
    return level_names[static_cast<std::size_t>(level)];
}

LogLevel log_level() noexcept {
    return current_level().load(std::memory_order_relaxed);
}

void set_log_level(LogLevel level) noexcept {
    current_level().store(level, std::memory_order_relaxed);
}

bool log_enabled(LogLevel level) noexcept {
    return level != LogLevel::off && level >= log_level();
}

LogSink set_log_sink(LogSink sink) {
    auto& state = sink_state();
    MutexLock lock(state.mutex);
    std::swap(state.sink, sink);
    return sink;
}

void log_write(LogLevel level, std::string_view message) {
    if (!log_enabled(level)) {
        return;
    }
    auto& state = sink_state();
    MutexLock lock(state.mutex);
    if (state.sink) {
        state.sink(level, message);
    } else {
        write_to_stderr(level, message);
    }
}

}  // namespace spillway
