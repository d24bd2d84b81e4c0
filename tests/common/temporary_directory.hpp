#pragma once
/// @file
/// A fresh directory under the system temporary directory, removed with
/// everything in it when the object goes away.

#include <filesystem>
#include <random>
#include <string>

namespace spillway::test {

/// Owns a new, empty directory for the lifetime of the object.
class TemporaryDirectory {
  public:
    TemporaryDirectory() {
        std::random_device random;
        path_ = std::filesystem::temp_directory_path()
                / ("spillway-test-" + std::to_string(random()) + std::to_string(random()));
        std::filesystem::create_directories(path_);
    }
    ~TemporaryDirectory() {
        std::error_code ignored;
        std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ignored);
        std::filesystem::remove_all(path_, ignored);
    }
    TemporaryDirectory(TemporaryDirectory const&) = delete;
    TemporaryDirectory& operator=(TemporaryDirectory const&) = delete;

    /// The directory's path.
    [[nodiscard]] std::filesystem::path const& path() const noexcept { return path_; }

  private:
    std::filesystem::path path_;
};

}  // namespace spillway::test
