#include "memory/spill_directory.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <optional>
#include <string>

#include <spillway/core/error.hpp>
#include <spillway/core/logging.hpp>

namespace spillway::memory::detail {
namespace {

constexpr std::string_view directory_prefix = "spillway-";

/// The pid in `directory`'s owner file, if it has a readable one.
std::optional<pid_t> read_owner(std::filesystem::path const& directory) {
    std::ifstream file(directory / SpillDirectory::owner_file);
    std::string text;
    if (!(file >> text)) {
        return std::nullopt;
    }
    pid_t pid = 0;
    auto const [end, error] = std::from_chars(text.data(), text.data() + text.size(), pid);
    if (error != std::errc{} || end != text.data() + text.size() || pid <= 0) {
        return std::nullopt;
    }
    return pid;
}

bool process_is_gone(pid_t pid) {
    return kill(pid, 0) != 0 && errno == ESRCH;
}

void remove_stale_directories(std::filesystem::path const& root, Statistics& statistics) {
    std::error_code error;
    for (auto const& entry : std::filesystem::directory_iterator(root, error)) {
        if (!entry.is_directory(error) || !entry.path().filename().string().starts_with(directory_prefix)) {
            continue;
        }
        auto const owner = read_owner(entry.path());
        if (!owner || !process_is_gone(*owner)) {
            continue;
        }
        std::filesystem::remove_all(entry.path(), error);
        if (error) {
            SPILLWAY_LOG(warn, "cannot remove stale spill directory '" << entry.path().string()
                                                                       << "': " << error.message());
            continue;
        }
        SPILLWAY_LOG(info, "removed spill directory '" << entry.path().string() << "' of dead process "
                                                       << *owner);
        statistics.add_count("memory.disk.stale_directories_removed");
    }
}

}  // namespace

SpillDirectory::SpillDirectory(std::filesystem::path const& root, Statistics& statistics) {
    std::error_code error;
    std::filesystem::create_directories(root, error);
    SPILLWAY_EXPECTS(
        !error,
        "cannot create spill_directory '" << root.string() << "': " << error.message()
                                          << "; set spill_directory to a writable directory",
        IoError
    );
    remove_stale_directories(root, statistics);

    // Distinguishes the directories of several resources in one process.
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
    std::ofstream owner(path_ / owner_file);
    owner << pid << '\n';
    owner.close();
    if (!owner) {
        std::filesystem::remove_all(path_, error);
        SPILLWAY_FAIL(
            "cannot write '" << (path_ / owner_file).string()
                             << "'; set spill_directory to a writable directory",
            IoError
        );
    }
}

SpillDirectory::~SpillDirectory() {
    std::error_code error;
    std::filesystem::remove_all(path_, error);
    if (error) {
        SPILLWAY_LOG(warn, "cannot remove spill directory '" << path_.string() << "': " << error.message());
    }
}

}  // namespace spillway::memory::detail
