#include "staged_output.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <string_view>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/core/file_descriptor.hpp>
#include <spillway/core/logging.hpp>

namespace spillway::cli {
namespace {

/// Removes the entries of `directory` that `is_candidate` picks and that no
/// run holds any more (one killed with SIGKILL left them): those whose lock
/// can be taken. The lock, not the pid in a name, decides, as pids repeat
/// across hosts sharing a file system and across containers.
void remove_unheld(std::filesystem::path const& directory,
                   std::function<bool(std::filesystem::directory_entry const&)> const& is_candidate) {
    std::error_code error;
    for (std::filesystem::directory_iterator entry(directory, error), end; !error && entry != end;
         entry.increment(error)) {
        if (!is_candidate(*entry)) {
            continue;
        }
        FileDescriptor const lock(::open(entry->path().c_str(), O_RDONLY | O_CLOEXEC));
        if (!lock || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0 || !lock.is_at(entry->path())) {
            continue;  // a run writes there, or it was removed meanwhile
        }
        std::error_code removal;
        std::filesystem::remove_all(entry->path(), removal);
        if (removal) {
            SPILLWAY_LOG(warn, "cannot remove '" << entry->path().string() << "', left by a dead process: "
                                                 << removal.message());
        } else {
            SPILLWAY_LOG(info, "removed '" << entry->path().string() << "', left by a dead process");
        }
    }
}

/// Removes the staging directories in `directory` that no run holds.
void remove_stale_staging(std::filesystem::path const& directory) {
    remove_unheld(directory, [](std::filesystem::directory_entry const& entry) {
        std::error_code ignored;
        return entry.path().filename().string().starts_with(StagedOutput::staging_prefix)
            && entry.is_directory(ignored);
    });
}

/// Removes each of `directories` that is empty, in order.
void remove_if_empty(std::vector<std::filesystem::path> const& directories) {
    std::error_code ignored;
    for (auto const& directory : directories) {
        std::filesystem::remove(directory, ignored);  // fails, as it should, on a directory that is not empty
    }
}

}  // namespace

StagedOutput::StagedOutput(std::filesystem::path target) : target_(std::move(target)) {
    if (!target_.has_filename()) {
        target_ = target_.parent_path();  // `parts/` is `parts`
    }
    std::error_code error;
    for (auto directory = target_; !directory.empty() && !std::filesystem::exists(directory, error);
         directory = directory.parent_path()) {
        made_.push_back(directory);
    }
    for (auto made = made_.rbegin(); made != made_.rend(); ++made) {
        removals_.emplace_back(*made, RemoveOnInterruption::Extent::empty_directory);
    }
    std::filesystem::create_directories(target_, error);
    if (error) {
        remove_if_empty(made_);
        SPILLWAY_FAIL("cannot create the output directory '" << target_.string() << "': " << error.message()
                                                             << "; give --output a writable path",
                      InvalidArgument);
    }
    remove_stale_staging(target_);
    bool const empty = std::filesystem::is_empty(target_, error);
    SPILLWAY_EXPECTS(!error && empty,
                     "the output directory '" << target_.string() << "' is not empty"
                                              << (error ? " or cannot be read: " + error.message() : "")
                                              << "; give --output a new or empty directory",
                     InvalidArgument);
    staging_ = target_ / (staging_prefix + std::to_string(::getpid()));
    removals_.emplace_back(staging_);
    std::filesystem::create_directory(staging_, error);
    if (!error) {
        // Held until the directory is committed or removed: what tells other
        // runs that it is not stale. A run removing stale directories holds
        // the lock only while it removes one, and would have removed this
        // one only before the lock: then it is gone, and the target as well
        // is no longer this run's alone.
        staging_lock_ = FileDescriptor(::open(staging_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        int locked = staging_lock_ ? 0 : -1;
        while (staging_lock_ && (locked = ::flock(staging_lock_.get(), LOCK_EX)) != 0 && errno == EINTR) {
        }
        if (locked != 0) {
            SPILLWAY_LOG(warn, "cannot lock '" << staging_.string() << "' (" << std::strerror(errno)
                                               << "): were this run killed, the next could not remove it");
        } else if (!staging_lock_.is_at(staging_)) {
            error = std::make_error_code(std::errc::no_such_file_or_directory);
        }
    }
    if (error) {
        remove_if_empty(made_);
        SPILLWAY_FAIL("cannot create '" << staging_.string() << "' in the output directory: " << error.message()
                                        << "; give --output a writable path",
                      InvalidArgument);
    }
}

StagedOutput::~StagedOutput() {
    if (committed_) {
        return;
    }
    std::error_code ignored;
    for (auto const& name : moved_) {
        std::filesystem::remove(target_ / name, ignored);
    }
    std::filesystem::remove_all(staging_, ignored);
    remove_if_empty(made_);
}

void StagedOutput::commit() {
    SPILLWAY_ASSERT(!committed_, "StagedOutput::commit called twice");
    std::error_code error;
    std::vector<std::filesystem::path> names;
    for (std::filesystem::directory_iterator entry(staging_, error), end; !error && entry != end;
         entry.increment(error)) {
        names.push_back(entry->path().filename());
    }
    SPILLWAY_EXPECTS(!error, "cannot list '" << staging_.string() << "': " << error.message(), IoError);
    removals_.back().publish([&] {
        for (auto const& name : names) {
            std::filesystem::rename(staging_ / name, target_ / name, error);
            SPILLWAY_EXPECTS(!error, "cannot move '" << (staging_ / name).string() << "' to '" << target_.string()
                                                     << "': " << error.message(),
                             IoError);
            moved_.push_back(name);
        }
        committed_ = true;
    });
    removals_.clear();
    std::filesystem::remove(staging_, error);
    if (error) {
        SPILLWAY_LOG(warn, "cannot remove '" << staging_.string() << "': " << error.message());
    }
}

namespace {

/// The start of the name of `target`'s partial file: `.<name>.spillway-partial-`.
std::string partial_file_prefix(std::filesystem::path const& target) {
    std::string prefix(1, '.');
    prefix.append(target.filename().string());
    prefix.append(StagedOutput::staging_prefix);
    return prefix;
}

/// Whether `suffix` ends a partial file's name as `StagedFile` makes them:
/// `<pid>-<n>`, or `<pid>` as earlier versions did.
bool is_partial_suffix(std::string_view suffix) {
    auto const digits = [](std::string_view text) {
        return !text.empty() && std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; });
    };
    auto const dash = suffix.find('-');
    return dash == std::string_view::npos ? digits(suffix)
                                          : digits(suffix.substr(0, dash)) && digits(suffix.substr(dash + 1));
}

/// Makes and locks a new partial file of `target`, under a name no other
/// file has (`O_EXCL`), and checks that it is still there once locked: a run
/// removing stale files may have taken the new file for one before the
/// lock, and then removed it. Where the file system has no locks, the file
/// goes on unlocked, with a warning (the next run cannot tell it from a
/// stale one then, and leaves it). Returns its path and its descriptor,
/// which holds the lock.
/// @throws InvalidArgument naming the file if it cannot be made.
/// @throws IoError if every name tried is taken.
std::pair<std::filesystem::path, FileDescriptor> make_locked_partial_file(std::filesystem::path const& target) {
    static std::atomic<unsigned> next_number{0};
    auto const prefix = partial_file_prefix(target) + std::to_string(::getpid()) + "-";
    constexpr int attempts = 100;
    for (int attempt = 0; attempt < attempts; ++attempt) {
        // relaxed: only uniqueness matters, and O_EXCL decides it
        auto path =
            target.parent_path() / (prefix + std::to_string(next_number.fetch_add(1, std::memory_order_relaxed)));
        FileDescriptor file(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
        if (!file && errno == EEXIST) {
            continue;  // another run with this pid (another host, another container) has this name
        }
        SPILLWAY_EXPECTS(file, "cannot create '" << path.string() << "', where '" << target.string()
                                                 << "' is written before it is renamed into place: "
                                                 << std::strerror(errno) << "; name a file in a writable directory",
                         InvalidArgument);
        // A run removing stale files holds the lock only while it removes one.
        int locked = 0;
        while ((locked = ::flock(file.get(), LOCK_EX)) != 0 && errno == EINTR) {
        }
        if (locked != 0) {
            SPILLWAY_LOG(warn, "cannot lock '" << path.string() << "' (" << std::strerror(errno)
                                               << "): were this run killed, the next could not remove it");
            return {std::move(path), std::move(file)};
        }
        if (file.is_at(path)) {
            return {std::move(path), std::move(file)};
        }
    }
    SPILLWAY_FAIL("cannot make a partial file of '" << target.string() << "': the " << attempts
                                                    << " names tried were taken",
                  IoError);
}

/// Removes the partial files of `target` that no run holds.
void remove_stale_partial_files(std::filesystem::path const& target) {
    auto const prefix = partial_file_prefix(target);
    remove_unheld(target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path(),
                  [&](std::filesystem::directory_entry const& entry) {
                      auto const name = entry.path().filename().string();
                      std::error_code ignored;
                      return name.starts_with(prefix)
                          && is_partial_suffix(std::string_view(name).substr(prefix.size()))
                          && entry.is_regular_file(ignored);
                  });
}

/// `path` with its symbolic links followed to the path they end at, which
/// need not exist.
/// @throws InvalidArgument if the links loop.
std::filesystem::path followed(std::filesystem::path path) {
    constexpr int most_links = 40;  // as the kernel's ELOOP
    std::error_code error;
    for (int links = 0; std::filesystem::is_symlink(path, error); ++links) {
        SPILLWAY_EXPECTS(links < most_links, "cannot follow the link '" << path.string() << "': too many links",
                         InvalidArgument);
        auto const next = std::filesystem::read_symlink(path, error);
        SPILLWAY_EXPECTS(!error, "cannot follow the link '" << path.string() << "': " << error.message(),
                         InvalidArgument);
        path = next.is_absolute() ? next : path.parent_path() / next;
    }
    return path;
}

/// `target`, checked as a file to write, and with a symbolic link followed
/// to the file it names (which is then replaced, and the link kept).
/// @throws InvalidArgument naming what is wrong otherwise: no name, standard
///         output (`-`), a directory, no directory to write it in, or
///         something there already that is not a regular file (a device, a
///         pipe), which a rename would replace rather than write to.
std::filesystem::path file_to_write(std::filesystem::path target) {
    SPILLWAY_EXPECTS(!target.empty(), "no file to write was named", InvalidArgument);
    SPILLWAY_EXPECTS(target != "-", "'-' names no file: the output goes to a file, not to standard output",
                     InvalidArgument);
    SPILLWAY_EXPECTS(target.has_filename(), "'" << target.string() << "' names a directory: name the file to write",
                     InvalidArgument);
    target = followed(std::move(target));
    std::error_code error;
    auto const status = std::filesystem::status(target, error);
    SPILLWAY_EXPECTS(status.type() != std::filesystem::file_type::directory,
                     "'" << target.string() << "' is a directory: name the file to write", InvalidArgument);
    SPILLWAY_EXPECTS(!std::filesystem::exists(status) || status.type() == std::filesystem::file_type::regular,
                     "'" << target.string()
                         << "' is not a regular file (a device or a pipe, say): the output is written beside it "
                            "and renamed into place, so name a regular file to write",
                     InvalidArgument);
    auto const directory = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
    SPILLWAY_EXPECTS(std::filesystem::is_directory(directory),
                     "cannot write '" << target.string() << "': there is no directory '" << directory.string() << "'",
                     InvalidArgument);
    return target;
}

}  // namespace

StagedFile::StagedFile(std::filesystem::path target) : target_(file_to_write(std::move(target))) {
    remove_stale_partial_files(target_);
    // Registered as it is made, as its name is chosen then.
    removal_.emplace([&] {
        auto [staging, lock] = make_locked_partial_file(target_);
        staging_ = std::move(staging);
        lock_ = std::move(lock);
        return staging_;
    });
}

StagedFile::~StagedFile() {
    if (!committed_) {
        std::error_code ignored;
        std::filesystem::remove(staging_, ignored);
    }
}

void StagedFile::commit() {
    SPILLWAY_ASSERT(!committed_, "a staged file is committed once");
    removal_->publish([&] {
        std::error_code error;
        std::filesystem::rename(staging_, target_, error);
        SPILLWAY_EXPECTS(!error, "cannot move '" << staging_.string() << "' to '" << target_.string()
                                                  << "': " << error.message(),
                         IoError);
    });
    committed_ = true;
}

}  // namespace spillway::cli
