#pragma once
/// @file
/// Command-line flags that set named options (docs/configuration.md), so a
/// flag, a `SPILLWAY_*` environment variable and code set the same thing.

#include <deque>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include <spillway/core/options.hpp>

namespace spillway::cli {

/// Checks a flag's value with the parser its option's reader uses.
/// @throws spillway::Error describing what is wrong with the value.
using ValueCheck = std::function<void(std::string const& value)>;

/// A value that `parse_bytes` accepts: `512MiB`.
[[nodiscard]] ValueCheck size_value();
/// A value that `parse_size` accepts: `512MiB` or `25%`.
[[nodiscard]] ValueCheck size_or_percent_value();
/// An integer in [`min`, `max`].
[[nodiscard]] ValueCheck integer_value(std::int64_t min, std::int64_t max);
/// A real number in (0, `max`].
[[nodiscard]] ValueCheck positive_number_value(double max);
/// The value of option `name` as `positive_number_value` checks it, or
/// `fallback` if it is not set: for the jobs that read an option the flag's
/// check cannot see (one set by its environment variable).
/// @throws InvalidArgument naming the option and its source otherwise.
[[nodiscard]] double positive_number_option(Options const& options, std::string_view name, double fallback,
                                            double max);
/// One of `choices`, as `normalized_choice` makes the value (any case).
[[nodiscard]] ValueCheck choice_value(std::vector<std::string> choices);
/// A duration above zero that `parse_duration` accepts: `90s`, `2min`.
[[nodiscard]] ValueCheck positive_duration_value();
/// A flag value that `parse_bool` accepts.
[[nodiscard]] ValueCheck bool_value();
/// Any text.
[[nodiscard]] ValueCheck any_value();

/// The option flags of one command. Each flag is checked while the command
/// line is parsed, so a bad value is a usage error naming the flag; `apply`
/// then sets every flag that was given as its option, with source
/// `OptionSource::command_line` (below values set in code, above the
/// environment).
///
/// Thread safety: externally synchronized. Must outlive the parsing of the
/// `CLI::App`s it added flags to (they write into it).
class OptionFlags {
  public:
    /// Adds `flag` (such as `--memory-limit`) to `command`, taking a value
    /// named `value_name` in the help, that sets option `option`. The help
    /// shows `help` and the environment variable of the option.
    void add(CLI::App& command, std::string const& flag, std::string const& option, std::string const& value_name,
             std::string const& help, ValueCheck check);

    /// Sets the option of every flag given on the command line in `options`.
    void apply(Options& options) const;

    /// Forgets the values of an earlier parse, before the next one.
    void clear() noexcept;

    /// `message` with every option that has a flag named by its flag instead
    /// (`csv_chunk_bytes` becomes `--block-size`), as whole words: what the
    /// library says in its terms, said in the tool's. An option whose flag
    /// was not given but whose environment variable is set is named by the
    /// variable (`SPILLWAY_CSV_CHUNK_BYTES`), where its value came from. Only
    /// options whose names hold an underscore are replaced; the others
    /// (`threads`, `window`) are plain words, and their flags have the same
    /// names.
    [[nodiscard]] std::string name_flags(std::string message) const;

  private:
    struct Bound {
        std::string option;
        std::string value;
        CLI::Option* flag = nullptr;  ///< owned by the CLI::App
    };
    std::deque<Bound> bound_;  ///< a deque: CLI11 writes into `value` through a reference
};

}  // namespace spillway::cli
