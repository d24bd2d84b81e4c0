#include "run_job.hpp"

#include <unistd.h>

#include <exception>
#include <optional>
#include <string>

#include "trace_file.hpp"

namespace spillway::cli {
namespace {

/// Where this process writes its trace: `path`, or with several processes
/// `path` with `-rank<N>` before its extension.
std::filesystem::path trace_path(std::filesystem::path const& path, Processes const& processes) {
    if (path.empty() || processes.size() == 1) {
        return path;
    }
    auto result = path;
    result.replace_filename(path.stem().string() + "-rank" + std::to_string(processes.rank())
                            + path.extension().string());
    return result;
}

}  // namespace

ExitCode run_job(std::function<std::unique_ptr<Job>()> const& make_job, OutputFlags const& output,
                 Processes const& processes, std::ostream& out, std::ostream& err) {
    std::string const prefix =
        processes.size() == 1 ? "spillway: " : "spillway: rank " + std::to_string(processes.rank()) + ": ";
    bool const reporting = processes.rank() == 0;
    std::unique_ptr<Job> job;
    std::optional<TraceFile> trace;
    try {
        // The trace file first: making the job may create its output.
        trace.emplace(trace_path(output.trace, processes));
        job = make_job();
    } catch (std::exception const& error) {
        err << prefix << error.what() << "\n";
        job.reset();
    }
    if (!processes.all(job != nullptr)) {
        if (job && reporting) {
            err << prefix << "another rank could not start the job; see its message\n";
        }
        return ExitCode::usage;
    }

    Progress progress(reporting ? Progress::choose(output.quiet, STDERR_FILENO) : Progress::Style::none, err);
    RunSummary summary;
    try {
        summary = job->run(progress);
        trace->write();
    } catch (std::exception const& error) {
        err << prefix << error.what() << "\n";
        return ExitCode::failure;
    }

    if (reporting && output.json) {
        out << summary.to_json() << "\n";
    } else if (reporting && !output.quiet) {
        out << summary.to_text();
    }
    if (summary.verified.value_or(true)) {
        return ExitCode::success;
    }
    if (reporting) {
        err << prefix << "verification failed:";
        for (auto const& line : summary.verification) {
            err << "\n  " << line;
        }
        err << "\n";
    }
    return ExitCode::verification_failed;
}

}  // namespace spillway::cli
