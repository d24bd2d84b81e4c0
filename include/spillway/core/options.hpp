#pragma once
/// @file
/// Configuration values from code, the command line and `SPILLWAY_*`
/// environment variables, and the parsers for sizes, durations and flags.
///
/// Precedence, highest first: a value set in code, then one given on the
/// command line, then the environment. An option named `memory_limit_host` is
/// read from the environment variable `SPILLWAY_MEMORY_LIMIT_HOST`.
/// docs/configuration.md lists every option spillway reads.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spillway {

/// Where an option value came from, from highest to lowest precedence.
enum class OptionSource { code, command_line, environment };

/// A size given either in bytes (`512MiB`) or as a fraction of some total
/// (`75%`), resolved against that total when it is known.
class SizeSpec {
  public:
    /// A size of exactly `bytes`.
    static SizeSpec bytes(std::uint64_t bytes) noexcept { return SizeSpec(bytes, -1.0); }
    /// A size of `percent` percent of a total. Requires: 0 <= percent <= 100.
    /// @throws InvalidArgument if `percent` is out of range.
    static SizeSpec percent(double percent);

    /// Whether this size is a fraction of a total rather than a byte count.
    [[nodiscard]] bool is_percent() const noexcept { return fraction_ >= 0.0; }
    /// The size in bytes, taking percentages of `total`.
    [[nodiscard]] std::uint64_t resolve(std::uint64_t total) const noexcept;
    /// The size for people, as `format_bytes` writes it (`512.00 MiB`), or
    /// the percentage (`75%`).
    [[nodiscard]] std::string to_string() const;

    friend bool operator==(SizeSpec const&, SizeSpec const&) = default;

  private:
    SizeSpec(std::uint64_t bytes, double fraction) : bytes_(bytes), fraction_(fraction) {}
    std::uint64_t bytes_;
    double fraction_;  ///< in [0, 1] for a percentage, negative for a byte count
};

/// Parses a byte count: a non-negative number with an optional unit. Binary
/// units `KiB MiB GiB TiB` (and the shorthands `K M G T`) are powers of 1024,
/// decimal units `KB MB GB TB` are powers of 1000, `B` or no unit is bytes.
/// Units are case-insensitive; a fraction like `1.5GiB` is allowed.
/// @throws InvalidArgument naming `what` if `text` is not such a size.
std::uint64_t parse_bytes(std::string_view text, std::string_view what = "size");

/// Parses a byte count (as `parse_bytes`) or a percentage such as `75%`.
/// @throws InvalidArgument naming `what` if `text` is neither.
SizeSpec parse_size(std::string_view text, std::string_view what = "size");

/// Parses a duration: a non-negative number with a unit `ns us ms s min h`,
/// or `0` / `off` for zero (which options use to mean "disabled").
/// @throws InvalidArgument naming `what` if `text` is not such a duration.
std::chrono::nanoseconds parse_duration(std::string_view text, std::string_view what = "duration");

/// Parses `true/false`, `yes/no`, `on/off` or `1/0` (case-insensitive).
/// @throws InvalidArgument naming `what` otherwise.
bool parse_bool(std::string_view text, std::string_view what = "flag");

/// `text` as choices are compared (`Options::get_choice`): without the
/// spaces around it, in lower case.
std::string normalized_choice(std::string_view text);

/// Formats a byte count for people: `0 B`, `512 B`, `1.50 KiB`, `2.00 GiB`.
std::string format_bytes(std::uint64_t bytes);

/// Formats a duration for messages: in seconds to a tenth from one second
/// up (`3.1 s`), in milliseconds below (`10 ms`, not `0.0 s`), and in
/// nanoseconds below half a millisecond (`500 ns`, not `0 ms`).
std::string format_duration(std::chrono::nanoseconds duration);

/// A set of named option values from up to three sources.
///
/// Every lookup marks its name as read, so that code which reads options
/// can refuse the names it does not know (`expect_read`).
///
/// Thread safety: const member functions may be called concurrently; `set`
/// must not run concurrently with anything else on the same object. Copies
/// are independent, and keep which names were read.
class Options {
  public:
    /// One value and where it came from.
    struct Value {
        std::string text;
        OptionSource source;
    };

    /// Empty: every getter returns its default.
    Options() = default;

    /// The options given by `SPILLWAY_*` variables in this process's
    /// environment, read once, now.
    static Options from_environment();

    /// The options given by `entries`, a list of `NAME=value` strings as in
    /// `environ`; entries without the `SPILLWAY_` prefix are ignored.
    static Options from_environment(std::initializer_list<char const*> entries);

    /// Sets `name` from `source`. A later `set` from the same source replaces
    /// the earlier one. Requires: `name` is lower-case letters, digits and `_`.
    /// @throws InvalidArgument if `name` is malformed.
    Options& set(std::string_view name, std::string value, OptionSource source = OptionSource::code);

    /// The value of `name` from the source with the highest precedence, if any.
    [[nodiscard]] std::optional<Value> find(std::string_view name) const;

    /// The names with a value from `source` that no lookup read since it was
    /// set, in name order.
    [[nodiscard]] std::vector<std::string> unread(OptionSource source) const;
    /// Fails if a name with a value from `source` was never read: `reader`
    /// (for example "spillway.shuffle"), having read its options, takes no
    /// option of that name.
    /// @throws InvalidArgument naming `reader` and the unread names.
    void expect_read(OptionSource source, std::string_view reader) const;

    /// The text of `name`, or `fallback` if it is not set.
    [[nodiscard]] std::string get_string(std::string_view name, std::string fallback) const;
    /// The text of `name`, which must be one of `choices` once normalized
    /// (`normalized_choice`: `" MPI"` is `mpi`), or `fallback`.
    /// @throws InvalidArgument naming the option and the choices otherwise.
    [[nodiscard]] std::string get_choice(
        std::string_view name, std::initializer_list<std::string_view> choices, std::string fallback
    ) const;
    /// `name` parsed as a flag (see `parse_bool`), or `fallback`.
    [[nodiscard]] bool get_bool(std::string_view name, bool fallback) const;
    /// `name` parsed as an integer in [`min`, `max`], or `fallback`.
    /// @throws InvalidArgument naming the option if it is not such an integer.
    [[nodiscard]] std::int64_t get_int(
        std::string_view name, std::int64_t fallback, std::int64_t min, std::int64_t max
    ) const;
    /// `name` parsed as a finite real number in [`min`, `max`], or `fallback`.
    /// @throws InvalidArgument naming the option if it is not such a number.
    [[nodiscard]] double get_double(std::string_view name, double fallback, double min, double max) const;
    /// `name` parsed as a byte count (see `parse_bytes`), or `fallback`.
    [[nodiscard]] std::uint64_t get_bytes(std::string_view name, std::uint64_t fallback) const;
    /// `name` parsed as a byte count or percentage (see `parse_size`), or `fallback`.
    [[nodiscard]] SizeSpec get_size(std::string_view name, SizeSpec fallback) const;
    /// `name` parsed as a duration (see `parse_duration`), or `fallback`.
    [[nodiscard]] std::chrono::nanoseconds get_duration(
        std::string_view name, std::chrono::nanoseconds fallback
    ) const;

    /// The environment variable that sets `name`: `SPILLWAY_` + upper case.
    static std::string environment_variable(std::string_view name);

    /// How an error message names option `name` whose value came from
    /// `source`: `option 'name'`, then where it came from unless in code
    /// (`(from environment variable SPILLWAY_NAME)`), as the getters' do.
    static std::string describe(std::string_view name, OptionSource source);

  private:
    /// Whether a name was looked up; copies copy the mark.
    class ReadMark {
      public:
        ReadMark() = default;
        ReadMark(ReadMark const& other) noexcept : read_(other.read()) {}
        ReadMark& operator=(ReadMark const& other) noexcept {
            read_.store(other.read(), std::memory_order_relaxed);
            return *this;
        }
        ~ReadMark() = default;
        void set(bool read) const noexcept { read_.store(read, std::memory_order_relaxed); }
        [[nodiscard]] bool read() const noexcept { return read_.load(std::memory_order_relaxed); }

      private:
        mutable std::atomic<bool> read_{false};
    };

    /// One name's values, one per source, and whether it was read.
    struct Entry {
        std::map<OptionSource, std::string> values;
        ReadMark read;
    };

    std::map<std::string, Entry, std::less<>> values_;  ///< by name
};

}  // namespace spillway
