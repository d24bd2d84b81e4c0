#include "memory/spill_directory.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cerrno>
#include <string>

#include <spillway/core/error.hpp>
#include <spillway/core/file_descriptor.hpp>
#include <spillway/core/logging.hpp>
#include <spillway/memory/memory_config.hpp>

#include "memory/spill_io.hpp"

namespace spillway::memory::detail {
namespace {

constexpr std::string_view directory_prefix = "spillway-";

/// Whether `text` is one or more decimal digits.
bool all_digits(std::string_view text) {
    return !text.empty() && std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; });
}

/// How old a spill directory without spill files or an owner file must be
/// to count as left behind: one being made (by a process with this pid in
/// another PID namespace) is that for microseconds.
constexpr auto unowned_directory_age = std::chrono::minutes(1);

/// Whether `directory` is a spill directory that lost its owner file to a
/// removal that did not finish (its process was killed meanwhile, or one
/// written before removals left the owner file for last), or never had one
/// (killed as it made it): named as `SpillDirectory` names them
/// (`spillway-<pid>-<number>`), of a pid that no process has here, and
/// holding spill files (`buffer-<number>`) and nothing else; or, modified
/// `unowned_directory_age` ago or earlier, nothing at all or the file the
/// owner file is made as. A directory being made is empty until its owner
/// file is made; anything else is not spillway's to remove.
bool is_partly_removed(std::filesystem::path const& directory) {
    auto const name = directory.filename().string();
    auto const numbers = std::string_view(name).substr(directory_prefix.size());
    auto const dash = numbers.find('-');
    if (dash == std::string_view::npos || !all_digits(numbers.substr(0, dash)) || !all_digits(numbers.substr(dash + 1))) {
        return false;
    }
    pid_t pid = 0;
    auto const digits = numbers.substr(0, dash);
    auto const parsed = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    if (parsed.ec != std::errc{} || pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) {
        return false;  // its process may still run, here or (with this pid) in another namespace
    }
    std::error_code error;
    std::size_t spill_files = 0;
    auto const new_owner_file = std::string(SpillDirectory::owner_file) + ".new";
    for (std::filesystem::directory_iterator entry(directory, error), end; !error && entry != end;
         entry.increment(error)) {
        auto const file = entry->path().filename().string();
        bool const spill_file = file.starts_with(SpillDirectory::spill_file_prefix)
                             && all_digits(std::string_view(file).substr(SpillDirectory::spill_file_prefix.size()));
        if ((!spill_file && file != new_owner_file) || !entry->is_regular_file(error)) {
            return false;
        }
        spill_files += spill_file ? 1 : 0;
    }
    if (error) {
        return false;
    }
    if (spill_files > 0) {
        return true;
    }
    auto const modified = std::filesystem::last_write_time(directory, error);
    return !error && std::filesystem::file_time_type::clock::now() - modified >= unowned_directory_age;
}

/// Removes `directory` if its owner file exists and its lock can be taken,
/// holding the lock while it removes, or if it is partly removed; returns
/// whether it removed it.
bool remove_if_stale(std::filesystem::path const& directory) {
    auto const owner = directory / SpillDirectory::owner_file;
    FileDescriptor const lock(::open(owner.c_str(), O_RDONLY | O_CLOEXEC));
    bool const unlocked = lock.get() >= 0 && flock(lock.get(), LOCK_EX | LOCK_NB) == 0 && lock.is_at(owner);
    if (!unlocked && (lock.get() >= 0 || !is_partly_removed(directory))) {
        return false;  // being made, alive, removed meanwhile, or a file system without locks
    }
    std::error_code error;
    std::filesystem::remove_all(directory, error);
    if (error && error != std::errc::no_such_file_or_directory) {
        SPILLWAY_LOG(warn, "cannot remove stale spill directory '" << directory.string() << "': " << error.message());
        return false;
    }
    return true;
}

void remove_stale_directories(std::filesystem::path const& root, Statistics& statistics) {
    std::error_code error;
    for (auto const& entry : std::filesystem::directory_iterator(root, error)) {
        if (!entry.path().filename().string().starts_with(directory_prefix) || !entry.is_directory(error)) {
            continue;
        }
        if (remove_if_stale(entry.path())) {
            SPILLWAY_LOG(info, "removed spill directory '" << entry.path().string()
                                                           << "': the process that made it is gone");
            statistics.add_count("memory.disk.stale_directories_removed");
        }
    }
}

/// Makes `directory`'s owner file, holding `pid`, already locked: it is
/// written and locked under another name, then renamed. Returns its
/// descriptor, which holds the lock.
/// @throws IoError naming the file.
int make_locked_owner_file(std::filesystem::path const& directory, pid_t pid) {
    auto const made = directory / (std::string(SpillDirectory::owner_file) + ".new");
    FileDescriptor file(::open(made.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    auto const failed = [&](char const* what) {
        SPILLWAY_FAIL("cannot " << what << " '" << made.string() << "': " << describe_errno(errno)
                                << "; set spill_directory to a writable directory",
                      IoError);
    };
    if (file.get() < 0) {
        failed("create");
    }
    if (flock(file.get(), LOCK_EX | LOCK_NB) != 0) {
        // Without locks the directory cannot be told from a stale one; other
        // processes then keep it, and only its owner removes it.
        SPILLWAY_LOG(warn, "cannot lock '" << made.string() << "' (" << describe_errno(errno)
                                           << "): a crash would leave this spill directory behind");
    }
    auto const text = std::to_string(pid) + "\n";
    if (::write(file.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
        failed("write");
    }
    if (::rename(made.c_str(), (directory / SpillDirectory::owner_file).c_str()) != 0) {
        failed("rename");
    }
    return file.release();
}

}  // namespace

SpillDirectory::SpillDirectory(std::filesystem::path const& root, Statistics& statistics) {
    std::error_code error;
    std::filesystem::create_directories(root, error);
    SPILLWAY_EXPECTS(
        !error,
        "cannot create spill_directory '"
            << root.string() << "'"
            << (root == MemoryConfig::default_spill_directory() && std::getenv("TMPDIR") != nullptr
                    ? " (by default $TMPDIR)"
                    : "")
            << ": " << error.message() << "; set spill_directory to a writable directory",
        IoError
    );
    remove_stale_directories(root, statistics);

    // Distinguishes the directories of several resources in one process, and
    // of processes with one pid in different PID namespaces.
    static std::atomic<unsigned> next_number{0};
    auto const pid = getpid();
    do {
        // relaxed: only uniqueness matters, no data is published through it
        auto const number = next_number.fetch_add(1, std::memory_order_relaxed);
        path_ = root / (std::string(directory_prefix) + std::to_string(pid) + "-" + std::to_string(number));
    } while (!std::filesystem::create_directory(path_, error) && !error);
    SPILLWAY_EXPECTS(
        !error,
        "cannot create spill directory '" << path_.string() << "': " << error.message()
                                          << "; set spill_directory to a writable directory",
        IoError
    );
    try {
        owner_fd_ = make_locked_owner_file(path_, pid);
    } catch (...) {
        std::filesystem::remove_all(path_, error);
        throw;
    }
}

SpillDirectory::~SpillDirectory() {
    // The spill files first and the owner file last, so that a process killed
    // meanwhile leaves a directory that others still see is stale.
    std::error_code error;
    for (std::filesystem::directory_iterator entry(path_, error), end; !error && entry != end;
         entry.increment(error)) {
        if (entry->path().filename() != owner_file) {
            std::error_code ignored;
            std::filesystem::remove_all(entry->path(), ignored);
        }
    }
    std::filesystem::remove_all(path_, error);
    if (error) {
        SPILLWAY_LOG(warn, "cannot remove spill directory '" << path_.string() << "': " << error.message());
    }
    ::close(owner_fd_);  // only now: the directory was removed under the lock
}

}  // namespace spillway::memory::detail
