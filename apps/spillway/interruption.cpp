#include "interruption.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <map>
#include <string>
#include <string_view>

#include <spillway/core/error.hpp>
#include <spillway/core/mutex.hpp>

#include "exit_code.hpp"

namespace spillway::cli {
namespace {

static_assert(128 + SIGINT == to_int(ExitCode::interrupted) && 128 + SIGTERM == to_int(ExitCode::terminated),
              "the exit codes of the signals are 128 + their numbers");

/// Times `remove_all` is tried on one path: a thread of the process may add
/// a file between its listing and its removal of a directory.
constexpr int removal_attempts = 10;

/// The paths to remove on a signal, and whether the handler is stopping.
struct Registry {
    Mutex mutex;
    /// By registration order, so removal can go newest first.
    std::map<std::uint64_t, std::pair<std::filesystem::path, RemoveOnInterruption::Extent>> paths
        SPILLWAY_GUARDED_BY(mutex);
    std::uint64_t next_id SPILLWAY_GUARDED_BY(mutex) = 0;
    /// The lines printed on stdout for SIGINT and for SIGTERM; empty for none.
    std::string sigint_report SPILLWAY_GUARDED_BY(mutex);
    std::string sigterm_report SPILLWAY_GUARDED_BY(mutex);
    /// Set by `~InterruptionHandler`: the signal the waiting thread gets next
    /// is the request to return.
    bool stopping SPILLWAY_GUARDED_BY(mutex) = false;
};

/// Used from `main` onwards only, and by the waiting thread until
/// `~InterruptionHandler` has joined it, so before its destruction.
Registry registry;

/// SIGINT and SIGTERM.
sigset_t interruption_signals() {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    return signals;
}

/// Writes `text` to the file descriptor `fd`, ignoring failures.
void write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        auto const written = ::write(fd, text.data(), text.size());
        if (written <= 0) {
            return;
        }
        text.remove_prefix(static_cast<std::size_t>(written));
    }
}

/// Removes every registered path, newest first.
void remove_registered_paths() SPILLWAY_REQUIRES(registry.mutex) {
    for (auto entry = registry.paths.rbegin(); entry != registry.paths.rend(); ++entry) {
        auto const& [path, extent] = entry->second;
        std::error_code error;
        if (extent == RemoveOnInterruption::Extent::empty_directory) {
            std::filesystem::remove(path, error);
            continue;
        }
        for (int attempt = 0; attempt < removal_attempts; ++attempt) {
            std::filesystem::remove_all(path, error);
            if (!error) {
                break;
            }
        }
    }
}

/// Says why the process ends (on stderr, and the report on stdout), removes
/// every registered path, newest first, and ends the process.
/// Requires: `lock` holds the registry's mutex; it is never released.
[[noreturn]] void end_process(int signal, MutexLock& lock) SPILLWAY_REQUIRES(registry.mutex) {
    static_cast<void>(lock);
    write_all(STDERR_FILENO, signal == SIGINT
                                 ? "spillway: interrupted by SIGINT; removing what this run has written\n"
                                 : "spillway: terminated by SIGTERM; removing what this run has written\n");
    // The other threads run on, and would complain about the files that
    // vanish under them.
    int const null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
        ::dup2(null, STDERR_FILENO);
    }
    // The report first: under mpirun, SIGKILL follows SIGTERM within a
    // second (Open MPI's odls_base_sigkill_timeout), which a large spill
    // directory's removal may outlast; the next run removes what is left.
    write_all(STDOUT_FILENO, signal == SIGINT ? registry.sigint_report : registry.sigterm_report);
    remove_registered_paths();
    ::_exit(128 + signal);
}

/// The waiting thread: handles SIGINT and SIGTERM until the handler stops.
void wait_for_signals() {
    // A closed stderr must not end the process before it ends itself.
    sigset_t broken_pipe;
    sigemptyset(&broken_pipe);
    sigaddset(&broken_pipe, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &broken_pipe, nullptr);
    auto const signals = interruption_signals();
    while (true) {
        int signal = 0;
        if (::sigwait(&signals, &signal) != 0) {
            continue;
        }
        MutexLock lock(registry.mutex);
        if (registry.stopping) {
            return;
        }
        end_process(signal, lock);
    }
}

}  // namespace

InterruptionHandler::InterruptionHandler() {
    auto const signals = interruption_signals();
    SPILLWAY_ASSERT(::pthread_sigmask(SIG_BLOCK, &signals, &previous_mask_) == 0, "the signals are valid");
    waiter_ = std::thread(wait_for_signals);
}

void InterruptionHandler::report_on_stdout(std::string on_sigint, std::string on_sigterm) {
    MutexLock lock(registry.mutex);
    registry.sigint_report = std::move(on_sigint);
    registry.sigterm_report = std::move(on_sigterm);
}

InterruptionHandler::~InterruptionHandler() {
    {
        // Blocks for good if the waiting thread is handling a signal.
        MutexLock lock(registry.mutex);
        registry.stopping = true;
    }
    ::pthread_kill(waiter_.native_handle(), SIGTERM);
    waiter_.join();
    ::pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

void wait_out_interruption() {
    MutexLock const lock(registry.mutex);  // held for good by a thread handling a signal
}

void print_final_report(std::function<void()> const& print) {
    {
        MutexLock const lock(registry.mutex);  // held for good by a thread handling a signal
        registry.sigint_report.clear();
        registry.sigterm_report.clear();
    }
    print();
}

void end_removing_registered_paths(std::function<void()> const& end) {
    MutexLock const lock(registry.mutex);
    remove_registered_paths();
    end();
    SPILLWAY_FATAL("the process did not end after removing what it had written");
}

RemoveOnInterruption::RemoveOnInterruption(std::filesystem::path path, Extent extent)
    : RemoveOnInterruption([&path] { return std::move(path); }, extent) {}

RemoveOnInterruption::RemoveOnInterruption(std::function<std::filesystem::path()> const& make, Extent extent) {
    MutexLock lock(registry.mutex);
    auto path = make();
    id_ = registry.next_id++;
    registry.paths.emplace(id_, std::make_pair(std::move(path), extent));
}

RemoveOnInterruption::~RemoveOnInterruption() {
    if (!registered_) {
        return;
    }
    MutexLock lock(registry.mutex);
    registry.paths.erase(id_);
}

void RemoveOnInterruption::publish(std::function<void()> const& work) {
    SPILLWAY_ASSERT(registered_, "RemoveOnInterruption::publish called after it succeeded");
    MutexLock lock(registry.mutex);
    work();
    registry.paths.erase(id_);
    registered_ = false;
}

}  // namespace spillway::cli
