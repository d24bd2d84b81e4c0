#include "command.hpp"

#include <sstream>
#include <string_view>

#include <spillway/core/error.hpp>
#include <spillway/core/error_types.hpp>
#include <spillway/core/options.hpp>

#include "command_line.hpp"
#include "exit_code.hpp"

namespace spillway::python {
namespace {

/// What the tool's messages start with.
constexpr std::string_view tool_prefix = "spillway: ";

/// `text` without the line breaks and spaces around it.
std::string trimmed(std::string text) {
    auto const first = text.find_first_not_of(" \n");
    auto const last = text.find_last_not_of(" \n");
    return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

}  // namespace

std::string run_command(std::vector<std::string> const& arguments, cli::Progress& progress) {
    cli::CommandLine command_line;
    std::ostringstream out;
    std::ostringstream err;
    if (command_line.parse(arguments, out, err)) {
        auto message = trimmed(err.str());
        if (message.starts_with(tool_prefix)) {
            message.erase(0, tool_prefix.size());
        }
        SPILLWAY_FAIL((message.empty() ? trimmed(out.str()) : message), InvalidArgument);
    }
    auto const options = command_line.options();
    SPILLWAY_EXPECTS(options.get_choice("comm", {"local", "mpi"}, "local") == "local",
                     "from Python, jobs run in this process (comm local); over MPI, use spillway.Shuffler with "
                     "spillway.MpiCommunicator, or run the tool under mpirun",
                     InvalidArgument);
    cli::RunSummary summary;
    try {
        auto const job = command_line.make_job(options);
        summary = job->run(progress);
        job->commit();
    } catch (Error const& error) {
        // The same type, with the tool's flags named (`CommandLine::name_flags`).
        with_error_type(error, [&]<typename Type>(Type const&, char const*) {
            throw Type(command_line.name_flags(error.what()));
        });
    }
    auto const code = summary.verified.value_or(true) ? cli::ExitCode::success : cli::ExitCode::verification_failed;
    return summary.to_json(code, summary.verification_error());
}

}  // namespace spillway::python
