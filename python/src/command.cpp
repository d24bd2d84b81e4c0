#include "command.hpp"

#include <sstream>

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>

#include "command_line.hpp"
#include "exit_code.hpp"

namespace spillway::python {
namespace {

/// Rethrows the `spillway::Error` being handled as the same type, its
/// message with the tool's flags named (`CommandLine::name_flags`).
[[noreturn]] void rethrow_naming_flags(cli::CommandLine const& command_line) {
    try {
        throw;
    } catch (InvalidArgument const& error) {
        throw InvalidArgument(command_line.name_flags(error.what()));
    } catch (OutOfMemory const& error) {
        throw OutOfMemory(command_line.name_flags(error.what()));
    } catch (ReservationError const& error) {
        throw ReservationError(command_line.name_flags(error.what()));
    } catch (IoError const& error) {
        throw IoError(command_line.name_flags(error.what()));
    } catch (CorruptData const& error) {
        throw CorruptData(command_line.name_flags(error.what()));
    } catch (PeerTimeout const& error) {
        throw PeerTimeout(command_line.name_flags(error.what()));
    } catch (Error const& error) {
        throw Error(command_line.name_flags(error.what()));
    }
}

/// `text` without the line breaks and spaces around it.
std::string trimmed(std::string text) {
    auto const first = text.find_first_not_of(" \n");
    auto const last = text.find_last_not_of(" \n");
    return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

}  // namespace

std::string run_command(std::vector<std::string> const& arguments, cli::Progress& progress) {
    std::vector<char const*> argv{"spillway"};
    for (auto const& argument : arguments) {
        argv.push_back(argument.c_str());
    }
    cli::CommandLine command_line;
    std::ostringstream out;
    std::ostringstream err;
    if (command_line.parse(static_cast<int>(argv.size()), argv.data(), out, err)) {
        auto message = trimmed(err.str());
        SPILLWAY_FAIL((message.empty() ? trimmed(out.str()) : message), InvalidArgument);
    }
    auto const options = command_line.options();
    SPILLWAY_EXPECTS(options.get_string("comm", "local") == "local",
                     "from Python, jobs run in this process (comm local); use spillway.MpiCommunicator for MPI",
                     InvalidArgument);
    cli::RunSummary summary;
    try {
        summary = command_line.make_job(options)->run(progress);
    } catch (Error const&) {
        rethrow_naming_flags(command_line);
    }
    auto const code = summary.verified.value_or(true) ? cli::ExitCode::success : cli::ExitCode::verification_failed;
    return summary.to_json(code, summary.verification_error());
}

}  // namespace spillway::python
