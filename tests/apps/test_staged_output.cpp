#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <spillway/core/error.hpp>

#include <common/error_matchers.hpp>
#include <common/temporary_directory.hpp>

#include "staged_output.hpp"

using namespace spillway;
using namespace spillway::cli;
using testing::HasSubstr;

namespace {

std::size_t count_entries(std::filesystem::path const& directory) {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(directory), {}));
}

/// The first line of the file at `path`.
std::string first_line(std::filesystem::path const& path) {
    std::ifstream file(path);
    std::string line;
    std::getline(file, line);
    return line;
}

/// The pid of a process that has ended.
pid_t dead_pid() {
    pid_t const child = ::fork();
    if (child == 0) {
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return child;
}

/// A staging directory of process `pid` in `target`, holding one file.
std::filesystem::path make_staging(std::filesystem::path const& target, pid_t pid) {
    auto const staging = target / (StagedOutput::staging_prefix + std::to_string(pid));
    std::filesystem::create_directories(staging);
    std::ofstream(staging / "part-00000.csv") << "left behind\n";
    return staging;
}

}  // namespace

TEST(StagedOutput, CommitMovesTheFilesIntoTheTargetAndRemovesTheStagingDirectory) {
    test::TemporaryDirectory directory;
    auto const target = directory.path() / "new" / "parts";
    StagedOutput output(target);
    EXPECT_EQ(output.staging().parent_path(), target);
    std::ofstream(output.staging() / "part-00000.csv") << "a\n";
    std::ofstream(output.staging() / "part-00001.csv") << "b\n";
    EXPECT_EQ(count_entries(target), 1u) << "only the staging directory before the commit";

    output.commit();
    EXPECT_EQ(count_entries(target), 2u);
    EXPECT_FALSE(std::filesystem::exists(output.staging()));
    EXPECT_EQ(first_line(target / "part-00001.csv"), "b");
}

TEST(StagedOutput, WithoutACommitATargetItMadeIsRemovedWithTheParentsItMade) {
    test::TemporaryDirectory directory;
    auto const target = directory.path() / "new" / "parts";
    {
        StagedOutput output(target.string() + "/");
        std::ofstream(output.staging() / "part-00000.csv") << "a\n";
    }
    EXPECT_FALSE(std::filesystem::exists(directory.path() / "new"));
    EXPECT_TRUE(std::filesystem::exists(directory.path())) << "only what it made";
}

TEST(StagedOutput, WithoutACommitAnEmptyTargetThatExistedStaysEmpty) {
    test::TemporaryDirectory directory;
    {
        StagedOutput output(directory.path());
        std::ofstream(output.staging() / "part-00000.csv") << "a\n";
    }
    EXPECT_TRUE(std::filesystem::is_directory(directory.path()));
    EXPECT_TRUE(std::filesystem::is_empty(directory.path()));
}

TEST(StagedOutput, ATargetThatIsNotEmptyIsAUsageError) {
    test::TemporaryDirectory directory;
    std::ofstream(directory.path() / "data.csv") << "x\n";
    try {
        StagedOutput output(directory.path());
        FAIL() << "a target with a file in it was taken";
    } catch (InvalidArgument const& error) {
        EXPECT_THAT(error.what(), HasSubstr("is not empty"));
    }
    EXPECT_EQ(count_entries(directory.path()), 1u);
}

TEST(StagedOutput, AStagingDirectoryNoRunHoldsIsRemovedOneARunHoldsIsNot) {
    test::TemporaryDirectory directory;
    // The lock decides, not the pid: pids repeat across hosts and containers.
    auto const stale = make_staging(directory.path(), ::getppid());
    {
        StagedOutput output(directory.path());
        EXPECT_FALSE(std::filesystem::exists(stale)) << "no run holds it";
        int const probe = ::open(output.staging().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_GE(probe, 0);
        EXPECT_NE(::flock(probe, LOCK_EX | LOCK_NB), 0) << "this run holds its own";
        ::close(probe);
    }

    auto const live = make_staging(directory.path(), dead_pid());
    int const held = ::open(live.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::flock(held, LOCK_EX), 0) << "as the job writing there holds it";
    EXPECT_THROW(StagedOutput output(directory.path()), InvalidArgument) << "another job is writing there";
    EXPECT_TRUE(std::filesystem::exists(live / "part-00000.csv"));
    ::close(held);
}

TEST(StagedFile, AppearsAtItsTargetOnlyOnCommit) {
    spillway::test::TemporaryDirectory directory;
    auto const target = directory.path() / "rows.csv";
    std::ofstream(target) << "old";
    {
        StagedFile file(target);
        EXPECT_EQ(file.staging().parent_path(), directory.path()) << "beside the target, on its file system";
        std::ofstream(file.staging()) << "new";
        file.commit();
        EXPECT_FALSE(std::filesystem::exists(file.staging()));
    }
    EXPECT_EQ(first_line(target), "new");
}

TEST(StagedFile, WithoutCommitLeavesNoPartialFileAndTheTargetAsItWas) {
    spillway::test::TemporaryDirectory directory;
    auto const target = directory.path() / "rows.csv";
    std::ofstream(target) << "old";
    std::filesystem::path staging;
    {
        StagedFile file(target);
        staging = file.staging();
        std::ofstream(staging) << "half written";
    }
    EXPECT_FALSE(std::filesystem::exists(staging));
    EXPECT_EQ(first_line(target), "old");
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(directory.path()), {}), 1);
}

TEST(StagedFile, ATargetThatIsADirectoryOrInNoDirectoryIsAUsageError) {
    spillway::test::TemporaryDirectory directory;
    EXPECT_THROW_WITH(StagedFile(directory.path()), InvalidArgument, "is a directory: name the file to write");
    EXPECT_THROW_WITH(StagedFile(""), InvalidArgument, "no file to write was named");
    EXPECT_THROW_WITH(StagedFile(directory.path() / "none" / "rows.csv"), InvalidArgument,
                      "there is no directory '" + (directory.path() / "none").string() + "'");
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(directory.path()), {}), 0) << "nothing made";
}

TEST(StagedFile, ATargetThatIsNoRegularFileIsAUsageErrorAndStaysAsItWas) {
    spillway::test::TemporaryDirectory directory;
    auto const pipe = directory.path() / "rows.pipe";
    ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
    EXPECT_THROW_WITH(StagedFile(pipe), InvalidArgument, "is not a regular file");
    EXPECT_TRUE(std::filesystem::is_fifo(pipe));
    EXPECT_THROW_WITH(StagedFile("/dev/null"), InvalidArgument, "is not a regular file");
    EXPECT_THROW_WITH(StagedFile("-"), InvalidArgument, "not to standard output");
    EXPECT_THROW_WITH(StagedFile(directory.path() / "none/"), InvalidArgument, "names a directory");
    EXPECT_EQ(count_entries(directory.path()), 1) << "nothing made";
}

TEST(StagedFile, ATargetThatIsALinkReplacesTheFileItNamesAndKeepsTheLink) {
    spillway::test::TemporaryDirectory directory;
    auto const file = directory.path() / "rows.csv";
    auto const link = directory.path() / "link.csv";
    std::ofstream(file) << "old";
    std::filesystem::create_symlink(file, link);
    {
        StagedFile staged(link);
        std::ofstream(staged.staging()) << "new";
        staged.commit();
    }
    EXPECT_TRUE(std::filesystem::is_symlink(link));
    EXPECT_EQ(first_line(file), "new");
}

TEST(StagedFile, APartialFileThatNoProcessLocksIsRemovedALockedOneIsNot) {
    spillway::test::TemporaryDirectory directory;
    auto const target = directory.path() / "rows.csv";
    auto const partial_of = [&](pid_t pid) {
        auto const partial = directory.path() / (".rows.csv.spillway-partial-" + std::to_string(pid));
        std::ofstream(partial) << "half written";
        return partial;
    };
    // The pid in a name decides nothing: pids repeat across hosts and containers.
    auto const stale = partial_of(::getppid());
    auto const written = partial_of(dead_pid());
    int const writer = ::open(written.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(writer, 0);
    ASSERT_EQ(::flock(writer, LOCK_EX), 0) << "as the run writing it holds it";
    auto const other = directory.path() / (".other.csv.spillway-partial-" + std::to_string(dead_pid()));
    std::ofstream(other) << "another target's";
    // What a run of this version killed with SIGKILL leaves; and names that
    // are not a partial file's.
    auto const stale_numbered = directory.path() / ".rows.csv.spillway-partial-7-3";
    std::ofstream(stale_numbered) << "half written";
    std::vector<std::filesystem::path> not_partial;
    for (auto const* suffix : {"old", "1-x", "1-2-3", "-1", "1-"}) {
        not_partial.push_back(directory.path() / (std::string(".rows.csv.spillway-partial-") + suffix));
        std::ofstream(not_partial.back()) << "named by hand";
    }
    {
        StagedFile file(target);
        EXPECT_FALSE(std::filesystem::exists(stale)) << "no process holds it";
        EXPECT_FALSE(std::filesystem::exists(stale_numbered)) << "no process holds it";
        EXPECT_TRUE(std::filesystem::exists(written)) << "its process is writing it";
        EXPECT_TRUE(std::filesystem::exists(other)) << "not this target's";
        for (auto const& path : not_partial) {
            EXPECT_TRUE(std::filesystem::exists(path)) << "not named as partial files are: " << path;
        }

        int const probe = ::open(file.staging().c_str(), O_RDONLY | O_CLOEXEC);
        ASSERT_GE(probe, 0) << "made at once";
        EXPECT_NE(::flock(probe, LOCK_EX | LOCK_NB), 0) << "and locked while it is written";
        ::close(probe);

        // Another run of the same pid (another host's, another container's)
        // has the next two names, and writes them.
        auto const name = file.staging().filename().string();
        auto const number = std::stoul(name.substr(name.rfind('-') + 1));
        auto const named = [&](unsigned long n) {
            return directory.path() / (name.substr(0, name.rfind('-') + 1) + std::to_string(n));
        };
        std::vector<int> others;
        for (auto const n : {number + 1, number + 2}) {
            std::ofstream(named(n)) << "another run's";
            others.push_back(::open(named(n).c_str(), O_RDONLY | O_CLOEXEC));
            ASSERT_EQ(::flock(others.back(), LOCK_EX), 0);
        }
        StagedFile second(target);
        EXPECT_EQ(second.staging(), named(number + 3)) << "the names taken are skipped";
        EXPECT_TRUE(std::filesystem::exists(file.staging())) << "held, so not taken for stale";
        for (auto const n : {number + 1, number + 2}) {
            EXPECT_EQ(first_line(named(n)), "another run's");
        }
        for (auto const fd : others) {
            ::close(fd);
        }
    }
    ::close(writer);
}

TEST(StagedFile, ALinkToAFileThatDoesNotExistMakesThatFile) {
    spillway::test::TemporaryDirectory directory;
    auto const file = directory.path() / "rows.csv";
    auto const link = directory.path() / "link.csv";
    std::filesystem::create_symlink("rows.csv", link);  // relative, and dangling
    {
        StagedFile staged(link);
        std::ofstream(staged.staging()) << "new";
        staged.commit();
    }
    EXPECT_TRUE(std::filesystem::is_symlink(link));
    EXPECT_TRUE(std::filesystem::is_regular_file(file));
}
