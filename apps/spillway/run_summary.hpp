#pragma once
/// @file
/// What a job of the `spillway` tool reports when it ends, for people and in
/// JSON (`--json`).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exit_code.hpp"

namespace spillway::cli {

/// The wall time of one phase of a job.
struct PhaseTime {
    std::string name;
    double seconds = 0;
};

/// The peak use of one memory tier, per rank, against its limit per rank.
struct TierPeak {
    std::string tier;                   ///< `HOST` or `DISK`
    std::uint64_t limit = 0;            ///< the tier's limit on each rank
    std::vector<std::uint64_t> ranks;   ///< the peak of each rank, by rank
};

/// A query's answer: the names of its columns, and its rows in order, each
/// an array of JSON values (numbers, strings, dates as `YYYY-MM-DD`, null).
struct QueryAnswer {
    std::vector<std::string> columns;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
};

/// The figures of one run of a job. Plain data, filled by the job; the
/// renderings are stable formats that tests and scripts read.
struct RunSummary {
    /// The suffix of a setting whose value is a size: an integer number of
    /// bytes, in JSON as it is, and in text formatted (`format_bytes`) under
    /// the name without the suffix (`memory_limit_bytes` reads
    /// `memory_limit 256.00 MiB`).
    static constexpr char const* bytes_suffix = "_bytes";

    std::string command;              ///< `shuffle`, `partition`, `generate` or `tpch`
    /// What ran: ranks, partitions, ...; sizes are byte counts named with
    /// `bytes_suffix`.
    nlohmann::ordered_json settings = nlohmann::ordered_json::object();
    std::uint64_t rows = 0;           ///< rows of input
    /// Input rows left out as malformed (`--bad-rows skip`); nothing unless
    /// the job was told to skip them.
    std::optional<std::uint64_t> skipped_rows;
    std::uint64_t bytes = 0;          ///< bytes of input the job moved
    double seconds = 0;               ///< wall time of the whole job
    std::vector<PhaseTime> phases;    ///< wall time of each phase, in order
    std::uint64_t spilled_bytes = 0;  ///< bytes written to the DISK tier
    std::uint64_t read_back_bytes = 0;  ///< bytes read back from the DISK tier
    /// Bytes of chunks the ranks sent to other ranks (over MPI, what crossed
    /// between processes); nothing for a job without ranks.
    std::optional<std::uint64_t> sent_bytes;
    std::vector<TierPeak> peak_memory;  ///< per tier, where the job uses buffer resources
    std::uint64_t peak_resident_bytes = 0;  ///< the process's peak resident set
    /// Whether the output passed verification; nothing for a job that has
    /// nothing to verify.
    std::optional<bool> verified;
    /// What verification checked, or the first things it found wrong.
    std::vector<std::string> verification;

    /// The answer of a query (`tpch`); nothing for the other jobs.
    std::optional<QueryAnswer> answer;
    /// `bytes / seconds`, 0 if no time passed.
    [[nodiscard]] double throughput() const noexcept;

    /// What failed verification, on one line: `verification failed: ` and
    /// the `verification` lines separated by `; `; empty unless `verified`
    /// is false.
    [[nodiscard]] std::string verification_error() const;

    /// The answer, if there is one, as a header line of column names and one
    /// line per row, values separated by ` | `; empty otherwise.
    [[nodiscard]] std::string answer_text() const;

    /// A block of lines for people, ending with a newline: `answer_text`,
    /// then the summary.
    [[nodiscard]] std::string to_text() const;

    /// One JSON object, on one line: `command`, `verified` (true, false or
    /// null), `exit_code` (`code`, what the tool returns), `error` (`error`,
    /// only if it is not empty), `settings`, `rows`, `skipped_rows` (if set),
    /// `bytes`, `seconds`, `throughput_bytes_per_second`, `phases`
    /// (`{name: seconds}`), `spilled_bytes`, `read_back_bytes`, `sent_bytes`
    /// (if set), `peak_memory`
    /// (`{tier: {limit, ranks}}`), `peak_resident_bytes` and `verification`
    /// (an array of lines). With an answer, `columns` (its column names)
    /// follows `exit_code`/`error`, `rows` is its rows (an array of arrays)
    /// instead of the count of input rows, and `rows_read` that count.
    [[nodiscard]] std::string to_json(ExitCode code, std::string const& error = {}) const;
};

/// What `--json` prints for a run that failed before it had a summary (a
/// usage error, or a failure while running): one JSON object, on one line,
/// with `command` (left out if `command` is empty: none was given),
/// `verified` false, `exit_code` (`code`) and `error`, the same keys a
/// summary's `to_json` starts with.
[[nodiscard]] std::string failure_json(std::string const& command, ExitCode code, std::string const& error);

/// `duration` in seconds.
[[nodiscard]] inline double to_seconds(std::chrono::steady_clock::duration duration) noexcept {
    return std::chrono::duration<double>(duration).count();
}

/// The peak resident set size of this process so far, in bytes.
[[nodiscard]] std::uint64_t peak_resident_bytes() noexcept;

}  // namespace spillway::cli
