#pragma once
/// @file
/// The command line of the `spillway` tool: its commands, flags and help.

#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <spillway/core/options.hpp>

#include "exit_code.hpp"
#include "generate_job.hpp"
#include "job.hpp"
#include "option_flags.hpp"
#include "distributed_partition_job.hpp"
#include "partition_job.hpp"
#include "shuffle_job.hpp"
#include "table_partition_job.hpp"
#include "tpch_job.hpp"

namespace spillway::cli {

/// The flags that shape what is printed rather than the job.
struct OutputFlags {
    bool json = false;            ///< `--json`: the summary as one JSON object on stdout
    bool quiet = false;           ///< `--quiet`: no progress, and no summary unless `--json` (an answer still)
    std::filesystem::path trace;  ///< `--trace FILE`: Chrome trace-event JSON written here
};

/// Parses the command line and makes the job it asks for.
///
/// Thread safety: externally synchronized. Neither copyable nor movable (the
/// CLI11 app refers into it).
class CommandLine {
  public:
    /// The commands and their flags; `spillway --help` describes them all.
    CommandLine();
    CommandLine(CommandLine const&) = delete;
    CommandLine& operator=(CommandLine const&) = delete;

    /// Parses `argv`. Returns the exit code when parsing ends the program:
    /// `success` after printing help to `out`, `usage` after printing what is
    /// wrong to `err` (and with `--json` among the arguments, `failure_json`
    /// to `out`, unless an MPI launcher started this process as a rank other
    /// than 0: `launcher_rank`). Returns nothing when a job is to run. Each
    /// call starts afresh: nothing an earlier call parsed remains.
    [[nodiscard]] std::optional<ExitCode> parse(int argc, char const* const* argv, std::ostream& out,
                                                std::ostream& err);
    /// As above, for `arguments` without the program's name (`{"partition", "-i", ...}`).
    [[nodiscard]] std::optional<ExitCode> parse(std::vector<std::string> const& arguments, std::ostream& out,
                                                std::ostream& err);

    /// The `SPILLWAY_*` environment, with the option flags given on the
    /// command line above it.
    [[nodiscard]] Options options() const;

    /// The output flags given.
    [[nodiscard]] OutputFlags const& output() const noexcept { return output_; }
    /// `message` with options named by their flags (`OptionFlags::name_flags`).
    [[nodiscard]] std::string name_flags(std::string message) const { return flags_.name_flags(std::move(message)); }

    /// The name of the command given (`shuffle`, `partition`, `generate` or `tpch`),
    /// or an empty string if parsing did not get to one.
    [[nodiscard]] std::string command() const;

    /// Whether the command given has the flag `flag` (`--comm`): the tool
    /// reads options `comm` and `ranks` only for a command with their flags,
    /// so their variables do not reach `generate`.
    [[nodiscard]] bool has_flag(std::string const& flag) const;

    /// The job of the command given, configured by `options`.
    /// @throws as the job's constructor does (a usage error).
    [[nodiscard]] std::unique_ptr<Job> make_job(Options const& options) const;

  private:
    /// Adds `--json`, `--quiet` and `--trace` to `command`.
    void add_output_flags(CLI::App& command);

    CLI::App app_;
    OptionFlags flags_;
    OutputFlags output_;
    PartitionArguments partition_;
    GenerateArguments generate_;
    TpchArguments tpch_;
    CLI::App* partition_command_ = nullptr;  ///< owned by app_
    CLI::App* generate_command_ = nullptr;   ///< owned by app_
    CLI::App* shuffle_command_ = nullptr;    ///< owned by app_
    CLI::App* tpch_command_ = nullptr;       ///< owned by app_
};

}  // namespace spillway::cli
