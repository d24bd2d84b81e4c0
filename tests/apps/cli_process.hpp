#pragma once
/// @file
/// Runs the `spillway` tool (or `mpirun` with it) as a child process and
/// captures its exit code, stdout and stderr.

#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

extern char** environ;

namespace spillway::test {

/// What a finished child process left.
struct ProcessResult {
    int exit_code = -1;  ///< the exit status, or 128 + the signal that ended it
    std::string out;
    std::string err;

    /// The last line of `out` parsed as JSON (the `--json` summary).
    [[nodiscard]] nlohmann::json summary() const {
        auto const end = out.find_last_not_of('\n');
        auto const start = out.rfind('\n', end);
        return nlohmann::json::parse(out.substr(start == std::string::npos ? 0 : start + 1));
    }
};

/// Runs `arguments[0]` (a path) with `arguments`, the environment of this
/// process plus `extra_environment` (`NAME=value` entries, which win), and
/// waits for it.
inline ProcessResult run_process(std::vector<std::string> const& arguments,
                                 std::vector<std::string> const& extra_environment = {}) {
    std::vector<char*> argv;
    for (auto const& argument : arguments) {
        argv.push_back(const_cast<char*>(argument.c_str()));
    }
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (auto const& entry : extra_environment) {
        envp.push_back(const_cast<char*>(entry.c_str()));
    }
    for (char** entry = environ; *entry != nullptr; ++entry) {
        envp.push_back(*entry);  // getenv takes the first match, so the extras win
    }
    envp.push_back(nullptr);

    std::array<int, 2> out_pipe{};
    std::array<int, 2> err_pipe{};
    EXPECT_EQ(::pipe(out_pipe.data()), 0);
    EXPECT_EQ(::pipe(err_pipe.data()), 0);
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
    for (int descriptor : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
        ::posix_spawn_file_actions_addclose(&actions, descriptor);
    }
    pid_t child = 0;
    int const spawned = ::posix_spawn(&child, argv[0], &actions, nullptr, argv.data(), envp.data());
    ::posix_spawn_file_actions_destroy(&actions);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    ProcessResult result;
    if (spawned != 0) {
        ADD_FAILURE() << "cannot start " << arguments[0] << ": error " << spawned;
        ::close(out_pipe[0]);
        ::close(err_pipe[0]);
        return result;
    }

    // Reads both pipes until both close, so a child filling one never blocks.
    std::array<pollfd, 2> pipes{{{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}}};
    std::array<std::string*, 2> sinks{&result.out, &result.err};
    int open_pipes = 2;
    while (open_pipes > 0) {
        if (::poll(pipes.data(), pipes.size(), -1) < 0 && errno != EINTR) {
            break;
        }
        for (std::size_t index = 0; index < pipes.size(); ++index) {
            if (pipes[index].fd < 0 || pipes[index].revents == 0) {
                continue;
            }
            char buffer[65536];
            auto const count = ::read(pipes[index].fd, buffer, sizeof buffer);
            if (count > 0) {
                sinks[index]->append(buffer, static_cast<std::size_t>(count));
            } else if (count == 0 || errno != EINTR) {
                ::close(pipes[index].fd);
                pipes[index].fd = -1;
                --open_pipes;
            }
        }
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

/// Runs the `spillway` tool of this build with `arguments` after its name.
inline ProcessResult run_spillway(std::vector<std::string> arguments,
                                  std::vector<std::string> const& extra_environment = {}) {
    arguments.insert(arguments.begin(), SPILLWAY_CLI_PATH);
    return run_process(arguments, extra_environment);
}

}  // namespace spillway::test
