#include "run_job.hpp"

#include <unistd.h>

#include <exception>
#include <optional>

#include <spillway/core/error.hpp>

#include "trace_file.hpp"

namespace spillway::cli {

ExitCode run_job(std::function<std::unique_ptr<Job>()> const& make_job, OutputFlags const& output,
                 std::ostream& out, std::ostream& err) {
    std::unique_ptr<Job> job;
    std::optional<TraceFile> trace;
    try {
        job = make_job();
        trace.emplace(output.trace);
    } catch (std::exception const& error) {
        err << "spillway: " << error.what() << "\n";
        return ExitCode::usage;
    }

    Progress progress(Progress::choose(output.quiet, STDERR_FILENO), err);
    RunSummary summary;
    try {
        summary = job->run(progress);
        trace->write();
    } catch (std::exception const& error) {
        err << "spillway: " << error.what() << "\n";
        return ExitCode::failure;
    }

    if (output.json) {
        out << summary.to_json() << "\n";
    } else if (!output.quiet) {
        out << summary.to_text();
    }
    if (summary.verified.value_or(true)) {
        return ExitCode::success;
    }
    err << "spillway: verification failed:";
    for (auto const& line : summary.verification) {
        err << "\n  " << line;
    }
    err << "\n";
    return ExitCode::verification_failed;
}

}  // namespace spillway::cli
