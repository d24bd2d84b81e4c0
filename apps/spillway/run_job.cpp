#include "run_job.hpp"

#include <unistd.h>

#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include <spillway/core/error.hpp>
#include <spillway/core/error_types.hpp>

#include "interruption.hpp"
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

ExitCode run_job(std::function<std::unique_ptr<Job>()> const& make_job, std::string const& command,
                 OutputFlags const& output, Processes const& processes, std::ostream& out, std::ostream& err,
                 std::function<std::string(std::string)> const& for_users) {
    auto const message_of = [&](std::exception const& error) {
        return for_users ? for_users(error.what()) : std::string(error.what());
    };
    // A failure while running ends with the type of the error, as the
    // library and the Python package raise it: "... (OutOfMemory)".
    auto const failure_of = [&](std::exception const& error) {
        auto message = message_of(error);
        if (auto const* typed = dynamic_cast<Error const*>(&error)) {
            with_error_type(*typed, [&](Error const&, std::string_view name) {
                if (name != "Error") {
                    message += " (" + std::string(name) + ")";
                }
            });
        }
        return message;
    };
    std::string const prefix =
        processes.size() == 1 ? "spillway: " : "spillway: rank " + std::to_string(processes.rank()) + ": ";
    bool const reporting = processes.rank() == 0;
    // One write a message: the processes of a job share one standard error,
    // where a message written in parts would interleave with another's.
    auto const report = [&](std::string const& message) { err << prefix + message + "\n" << std::flush; };
    auto const fail = [&](ExitCode code, std::string const& message) {
        print_final_report([&] {
            if (reporting && output.json) {
                out << failure_json(command, code, message) << "\n" << std::flush;
            }
        });
        return code;
    };

    // Over MPI, a process that stops answering ends the job at once, as
    // neither its sends nor finalising MPI would end: what this process
    // wrote goes first.
    auto const end_job = [&](std::string const& message) {
        auto const code = fail(ExitCode::failure, message);
        out.flush();
        err.flush();
        end_removing_registered_paths([&] { processes.abort_job(to_int(code)); });
    };
    auto const agree = [&](bool ok) {
        try {
            return processes.all(ok);
        } catch (PeerTimeout const& error) {
            auto const message = failure_of(error);
            report(message);
            end_job(message);
        }
        return false;  // not reached: `end_job` ends the process
    };

    std::unique_ptr<Job> job;
    std::optional<TraceFile> trace;
    std::string error_message;
    try {
        // The trace file first: making the job may create its output.
        trace.emplace(trace_path(output.trace, processes));
        job = make_job();
    } catch (std::exception const& error) {
        error_message = message_of(error);
        report(error_message);
        job.reset();
    }
    if (!agree(job != nullptr)) {
        std::string const elsewhere = "another rank could not start the job; see its message";
        if (job && reporting) {
            report(elsewhere);
        }
        return fail(ExitCode::usage, job ? elsewhere : error_message);
    }

    Progress progress(reporting ? Progress::choose(output.quiet, STDERR_FILENO) : Progress::Style::none, err);
    RunSummary summary;
    bool ran = false;
    bool failed = false;  // whether this process's run or trace failed
    std::string failure;  // and its error
    try {
        summary = job->run(progress);
        ran = true;
        trace->write();
    } catch (std::exception const& error) {
        wait_out_interruption();
        failed = true;
        failure = failure_of(error);
        report(failure);
        if (!ran) {
            try {
                trace->write();  // what led to the failure
            } catch (std::exception const& trace_error) {
                report(message_of(trace_error));
            }
        }
        if (dynamic_cast<PeerTimeout const*>(&error) != nullptr && processes.size() > 1) {
            end_job(failure);
        }
    }
    // The output is committed only where every process ran and wrote its trace.
    if (!agree(!failed)) {
        if (!failed) {
            failure = "another rank failed; see its message";
            if (reporting) {
                report(failure);
            }
        }
        return fail(ExitCode::failure, failure);
    }
    try {
        job->commit();
    } catch (std::exception const& error) {
        auto const message = failure_of(error);
        report(message);
        return fail(ExitCode::failure, message);
    }

    bool const verified = summary.verified.value_or(true);
    auto code = verified ? ExitCode::success : ExitCode::verification_failed;
    bool written = true;
    print_final_report([&] {
        if (!reporting) {
            return;
        }
        if (output.json) {
            out << summary.to_json(code, summary.verification_error()) << "\n";
        } else {
            out << (output.quiet ? summary.answer_text() : summary.to_text());
        }
        written = static_cast<bool>(out.flush());
    });
    if (!written) {
        // A full disk, say: what the caller keeps is incomplete.
        report(std::string("cannot write the ") + (summary.answer ? "answer and summary" : "summary")
               + " to standard output");
        code = verified ? ExitCode::failure : code;
    }
    if (reporting && !verified) {
        std::string message = "verification failed:";
        for (auto const& line : summary.verification) {
            message += "\n  " + line;
        }
        report(message);
    }
    return code;
}

}  // namespace spillway::cli
