#include <spillway/core/file_descriptor.hpp>

#include <common/temporary_directory.hpp>

#include <fcntl.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

using namespace spillway;

TEST(FileDescriptor, IsAtThePathOnlyWhileThatPathNamesItsFile) {
    test::TemporaryDirectory directory;
    auto const path = directory.path() / "lock";
    std::ofstream(path) << "x";
    FileDescriptor const file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(file);
    EXPECT_TRUE(file.is_at(path));
    EXPECT_FALSE(file.is_at(directory.path())) << "another file";

    auto const other = directory.path() / "other";
    std::ofstream(other) << "y";
    std::filesystem::rename(other, path);
    EXPECT_FALSE(file.is_at(path)) << "replaced";
    std::filesystem::remove(path);
    EXPECT_FALSE(file.is_at(path)) << "unlinked";
    EXPECT_FALSE(FileDescriptor().is_at(directory.path())) << "holding none";
}
