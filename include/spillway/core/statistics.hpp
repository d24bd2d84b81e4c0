#pragma once
/// @file
/// Named counters, byte totals and durations that many threads record into,
/// with a report for people and one in JSON.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <spillway/core/mutex.hpp>

namespace spillway {

/// A thread-safe collection of named statistics.
///
/// Each name holds one kind of figure (a count, bytes or seconds) and keeps
/// the number of records, their sum and their largest single value. Names are
/// dotted paths by convention, such as `memory.spill.bytes`.
///
/// Thread safety: every member function may be called concurrently.
/// Recording takes one short internal lock; record per operation (per spill,
/// per chunk), not per byte.
class Statistics {
  public:
    /// What a statistic measures; decides how it is printed.
    enum class Unit { count, bytes, seconds };

    /// The figures recorded under one name.
    struct Entry {
        Unit unit = Unit::count;
        std::uint64_t records = 0;  ///< how many values were recorded
        double total = 0;           ///< their sum
        double max = 0;             ///< the largest single value
    };

    /// Adds `value` under `name`.
    /// @throws InvalidArgument if `name` already holds a different unit.
    void record(std::string_view name, double value, Unit unit);

    /// Adds `count` to the counter `name`.
    void add_count(std::string_view name, std::uint64_t count = 1) {
        record(name, static_cast<double>(count), Unit::count);
    }
    /// Adds `bytes` to the byte total `name`.
    void add_bytes(std::string_view name, std::uint64_t bytes) {
        record(name, static_cast<double>(bytes), Unit::bytes);
    }
    /// Adds `elapsed` to the duration `name`.
    template <typename Rep, typename Period>
    void add_duration(std::string_view name, std::chrono::duration<Rep, Period> elapsed) {
        record(name, std::chrono::duration<double>(elapsed).count(), Unit::seconds);
    }

    /// The figures under `name`, or nothing if none were recorded.
    [[nodiscard]] std::optional<Entry> get(std::string_view name) const;
    /// A copy of every entry, ordered by name.
    [[nodiscard]] std::map<std::string, Entry, std::less<>> snapshot() const;
    /// Forgets every entry.
    void clear();

    /// A table for people: one line per name with total, records and max.
    [[nodiscard]] std::string report() const;
    /// A JSON object: `{"name": {"unit": "bytes", "records": n, "total": x, "max": y}, ...}`;
    /// bytes of a name that are not UTF-8 become U+FFFD.
    [[nodiscard]] std::string to_json() const;

  private:
    mutable Mutex mutex_;
    std::map<std::string, Entry, std::less<>> entries_ SPILLWAY_GUARDED_BY(mutex_);
};

/// Measures the time from its construction to its destruction and records it
/// as a duration in a `Statistics`. Not movable; lives in one scope.
class ScopedTimer {
  public:
    /// Starts timing; records into `statistics` under `name` when destroyed.
    /// Requires: `statistics` and the text of `name` outlive the timer.
    ScopedTimer(Statistics& statistics, std::string_view name)
        : statistics_(statistics), name_(name), start_(std::chrono::steady_clock::now()) {}
    ~ScopedTimer() { statistics_.add_duration(name_, std::chrono::steady_clock::now() - start_); }
    ScopedTimer(ScopedTimer const&) = delete;
    ScopedTimer& operator=(ScopedTimer const&) = delete;

  private:
    Statistics& statistics_;
    std::string_view name_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace spillway
