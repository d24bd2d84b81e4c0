#pragma once
/// @file
/// A minimal leveled logger. Messages at or above the process-wide level go
/// to a sink (stderr by default), one whole line at a time.
///
/// The level starts from the option `log_level` in the environment
/// (`SPILLWAY_LOG_LEVEL=debug`) and defaults to `warn`; a value there that
/// names no level is ignored, with a line on stderr saying so (the
/// `spillway` tool refuses it instead).

#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace spillway {

/// Severity of a log message, from most to least verbose; `off` silences all.
enum class LogLevel { trace, debug, info, warn, error, off };

/// The level names, as messages list them.
inline constexpr std::string_view log_level_choices = "trace, debug, info, warn, error or off";

/// Parses `trace`, `debug`, `info`, `warn`, `error` or `off` (case-insensitive).
/// @throws InvalidArgument naming the valid levels otherwise.
LogLevel parse_log_level(std::string_view text);

/// The level `text` names, as `parse_log_level` reads it; nothing if it names none.
std::optional<LogLevel> log_level_named(std::string_view text) noexcept;

/// The lower-case name of `level`.
std::string_view to_string(LogLevel level) noexcept;

/// The current process-wide level. Thread-safe.
LogLevel log_level() noexcept;

/// Sets the process-wide level. Thread-safe; takes effect for later messages.
void set_log_level(LogLevel level) noexcept;

/// Whether a message at `level` would be written. Thread-safe and cheap.
bool log_enabled(LogLevel level) noexcept;

/// Receives every message that passes the level, already formatted without a
/// trailing newline. Called under the logger's lock, so calls never overlap; a
/// sink must not log.
using LogSink = std::function<void(LogLevel, std::string_view)>;

/// Replaces the sink (an empty one restores stderr) and returns the previous
/// one. Thread-safe.
LogSink set_log_sink(LogSink sink);

/// Writes `message` at `level` if the level is enabled. Thread-safe.
void log_write(LogLevel level, std::string_view message);

}  // namespace spillway

/// Logs a stream expression at a level, building the message only if the
/// level is enabled: `SPILLWAY_LOG(info, "spilled " << bytes << " bytes")`.
#define SPILLWAY_LOG(level, message)                                                    \
    do {                                                                                \
        if (::spillway::log_enabled(::spillway::LogLevel::level)) {                     \
            std::ostringstream spillway_log_stream_;                                    \
            spillway_log_stream_ << message;                                            \
            ::spillway::log_write(::spillway::LogLevel::level, spillway_log_stream_.str()); \
        }                                                                               \
    } while (0)
