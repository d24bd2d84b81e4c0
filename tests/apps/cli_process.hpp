#pragma once
/// @file
/// Runs the `spillway` tool (or `mpirun` with it) as a child process and
/// captures its exit code, stdout and stderr.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

extern char** environ;

namespace spillway::test {

/// What a finished child process left.
struct ProcessResult {
    int exit_code = -1;  ///< the exit status, or 128 + the signal that ended it
    int signal = 0;      ///< the signal that ended it, or 0 if it exited
    std::string out;
    std::string err;

    /// The last line of `out` parsed as JSON (the `--json` summary).
    [[nodiscard]] nlohmann::json summary() const {
        auto const end = out.find_last_not_of('\n');
        auto const start = out.rfind('\n', end);
        return nlohmann::json::parse(out.substr(start == std::string::npos ? 0 : start + 1));
    }
};

/// A child process whose stdout and stderr are captured.
///
/// With `stall_stderr`, its stderr is a pipe filled to capacity before it
/// starts, so the child blocks at its first write there until `wait` reads
/// the pipe: a test can act on a run known to be under way (the `spillway`
/// tool prints progress as it goes; `blocked_writing_to_a_pipe` says when it
/// got there) without depending on timing.
class ChildProcess {
  public:
    /// Starts `arguments[0]` (a path) with `arguments` and the environment of
    /// this process plus `extra_environment` (`NAME=value` entries, which win).
    ChildProcess(std::vector<std::string> const& arguments, std::vector<std::string> const& extra_environment = {},
                 bool stall_stderr = false) {
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
        EXPECT_EQ(::pipe2(out_pipe.data(), O_CLOEXEC), 0);
        EXPECT_EQ(::pipe2(err_pipe.data(), O_CLOEXEC), 0);
        if (stall_stderr) {
            stalled_bytes_ = fill(err_pipe[1]);
        }
        posix_spawn_file_actions_t actions;
        ::posix_spawn_file_actions_init(&actions);
        ::posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
        ::posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
        int const spawned = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
        ::posix_spawn_file_actions_destroy(&actions);
        ::close(out_pipe[1]);
        ::close(err_pipe[1]);
        pipes_ = {out_pipe[0], err_pipe[0]};
        if (spawned != 0) {
            ADD_FAILURE() << "cannot start " << arguments[0] << ": error " << spawned;
            pid_ = -1;
        }
    }
    ~ChildProcess() {
        if (pid_ > 0 && !status_) {
            ::kill(pid_, SIGKILL);
            static_cast<void>(wait());
        }
        for (int pipe : pipes_) {
            if (pipe >= 0) {
                ::close(pipe);
            }
        }
    }
    ChildProcess(ChildProcess const&) = delete;
    ChildProcess& operator=(ChildProcess const&) = delete;

    /// The child's process id.
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }

    /// Whether the child has not ended yet.
    [[nodiscard]] bool running() {
        if (pid_ <= 0 || status_) {
            return false;
        }
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            status_ = status;
        }
        return !status_;
    }

    /// Whether a thread of the child is blocked writing to a pipe, as
    /// /proc/<pid>/task/*/wchan shows (`pipe_write`, `anon_pipe_write`): with
    /// `stall_stderr`, that its first line on stderr waits for `wait`.
    [[nodiscard]] bool blocked_writing_to_a_pipe() const {
        std::error_code error;
        for (auto const& task : std::filesystem::directory_iterator(
                 std::filesystem::path("/proc") / std::to_string(pid_) / "task", error)) {
            std::ifstream wchan(task.path() / "wchan");
            std::string function;
            if (wchan >> function && function.find("pipe_write") != std::string::npos) {
                return true;
            }
        }
        return false;
    }

    /// Sends `signal` to the child.
    void signal(int signal) {
        if (pid_ > 0 && !status_) {
            EXPECT_EQ(::kill(pid_, signal), 0);
        }
    }

    /// Reads both pipes until the child closes them, waits for it to end, and
    /// returns what it left (without the bytes that stalled its stderr).
    [[nodiscard]] ProcessResult wait() {
        ProcessResult result;
        // Reads both pipes until both close, so a child filling one never blocks.
        std::array<pollfd, 2> pipes{{{pipes_[0], POLLIN, 0}, {pipes_[1], POLLIN, 0}}};
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
                    pipes_[index] = -1;
                    pipes[index].fd = -1;
                    --open_pipes;
                }
            }
        }
        result.err.erase(0, std::min(stalled_bytes_, result.err.size()));
        if (pid_ <= 0) {
            return result;
        }
        if (!status_) {
            int status = 0;
            while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
            }
            status_ = status;
        }
        result.signal = WIFSIGNALED(*status_) ? WTERMSIG(*status_) : 0;
        result.exit_code = WIFEXITED(*status_) ? WEXITSTATUS(*status_) : 128 + result.signal;
        return result;
    }

  private:
    /// Fills the pipe whose write end is `descriptor`; returns the bytes written.
    static std::size_t fill(int descriptor) {
        int const flags = ::fcntl(descriptor, F_GETFL);
        ::fcntl(descriptor, F_SETFL, flags | O_NONBLOCK);
        std::size_t written = 0;
        std::string const filler(4096, '.');
        while (true) {
            auto const count = ::write(descriptor, filler.data(), filler.size());
            if (count <= 0) {
                break;
            }
            written += static_cast<std::size_t>(count);
        }
        EXPECT_EQ(errno, EAGAIN) << "the pipe is full";
        ::fcntl(descriptor, F_SETFL, flags);  // the child's writes block
        return written;
    }

    pid_t pid_ = -1;
    std::array<int, 2> pipes_{-1, -1};  ///< the read ends of stdout and stderr, -1 once closed
    std::size_t stalled_bytes_ = 0;     ///< written to stderr before the child started
    std::optional<int> status_;         ///< the child's wait status, once it has ended
};

/// Runs `arguments[0]` (a path) with `arguments`, the environment of this
/// process plus `extra_environment` (`NAME=value` entries, which win), and
/// waits for it.
inline ProcessResult run_process(std::vector<std::string> const& arguments,
                                 std::vector<std::string> const& extra_environment = {}) {
    return ChildProcess(arguments, extra_environment).wait();
}

/// Runs the `spillway` tool of this build with `arguments` after its name.
inline ProcessResult run_spillway(std::vector<std::string> arguments,
                                  std::vector<std::string> const& extra_environment = {}) {
    arguments.insert(arguments.begin(), SPILLWAY_CLI_PATH);
    return run_process(arguments, extra_environment);
}

}  // namespace spillway::test
