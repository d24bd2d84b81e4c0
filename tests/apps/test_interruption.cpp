// SIGINT and SIGTERM, raised in a child process (a death test) that handles
// them as the `spillway` tool does.

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include <common/temporary_directory.hpp>

#include "interruption.hpp"

using namespace spillway::cli;

namespace {

/// Sends `signal` to this process and waits for the handler to end it.
[[noreturn]] void raise_and_wait(int signal) {
    ::kill(::getpid(), signal);
    while (true) {
        ::pause();  // never returns: the signals are blocked in this thread
    }
}

/// Sends SIGTERM to this process and returns once the handler has taken it:
/// it then waits for the registry, which the caller holds.
void raise_sigterm_and_wait_until_taken() {
    ::kill(::getpid(), SIGTERM);
    sigset_t pending;
    do {
        std::this_thread::yield();
        ::sigpending(&pending);
    } while (sigismember(&pending, SIGTERM) == 1);
}

/// A directory holding a file.
std::filesystem::path make_directory(std::filesystem::path const& path) {
    std::filesystem::create_directories(path);
    std::ofstream(path / "file") << "data\n";
    return path;
}

}  // namespace

TEST(Interruption, ASignalRemovesTheRegisteredPathsAndEndsTheProcessWith128PlusIt) {
    spillway::test::TemporaryDirectory directory;
    for (auto const& [signal, message] : {std::pair{SIGTERM, "spillway: terminated by SIGTERM"},
                                          std::pair{SIGINT, "spillway: interrupted by SIGINT"}}) {
        auto const output = make_directory(directory.path() / "output");
        auto const kept = make_directory(directory.path() / "kept");
        EXPECT_EXIT(
            {
                InterruptionHandler const handler;
                RemoveOnInterruption const removal(output);
                { RemoveOnInterruption const unregistered(kept); }
                raise_and_wait(signal);
            },
            testing::ExitedWithCode(128 + signal), message);
        EXPECT_FALSE(std::filesystem::exists(output));
        EXPECT_TRUE(std::filesystem::exists(kept / "file")) << "no longer registered";
    }
}

TEST(Interruption, AnEmptyDirectoryExtentRemovesADirectoryOnlyIfEmpty) {
    spillway::test::TemporaryDirectory directory;
    auto const empty = directory.path() / "empty";
    std::filesystem::create_directory(empty);
    auto const full = make_directory(directory.path() / "full");
    EXPECT_EXIT(
        {
            InterruptionHandler const handler;
            RemoveOnInterruption const remove_empty(empty, RemoveOnInterruption::Extent::empty_directory);
            RemoveOnInterruption const remove_full(full, RemoveOnInterruption::Extent::empty_directory);
            raise_and_wait(SIGTERM);
        },
        testing::ExitedWithCode(143), "");
    EXPECT_FALSE(std::filesystem::exists(empty));
    EXPECT_TRUE(std::filesystem::exists(full / "file"));
}

TEST(Interruption, ASignalDuringPublishIsHandledAfterItAndLeavesThePublishedPath) {
    spillway::test::TemporaryDirectory directory;
    auto const staging = make_directory(directory.path() / "staging");
    auto const published = directory.path() / "published";
    EXPECT_EXIT(
        {
            InterruptionHandler const handler;
            RemoveOnInterruption removal(staging);
            removal.publish([&] {
                raise_sigterm_and_wait_until_taken();
                std::filesystem::rename(staging, published);
            });
            raise_and_wait(SIGTERM);
        },
        testing::ExitedWithCode(143), "");
    EXPECT_TRUE(std::filesystem::exists(published / "file"));
}

TEST(Interruption, APathMadeWhileASignalWaitsIsRegisteredBeforeTheSignalIsHandled) {
    spillway::test::TemporaryDirectory directory;
    auto const made = directory.path() / "made";
    EXPECT_EXIT(
        {
            InterruptionHandler const handler;
            RemoveOnInterruption const removal([&] {
                raise_sigterm_and_wait_until_taken();
                return make_directory(made);
            });
            raise_and_wait(SIGTERM);
        },
        testing::ExitedWithCode(143), "");
    EXPECT_FALSE(std::filesystem::exists(made));
}

TEST(Interruption, AProcessThatEndsWithoutUnwindingRemovesTheRegisteredPathsFirst) {
    spillway::test::TemporaryDirectory directory;
    auto const output = make_directory(directory.path() / "output");
    EXPECT_EXIT(
        {
            InterruptionHandler const handler;
            RemoveOnInterruption const removal(output);
            end_removing_registered_paths([] { ::_exit(1); });
        },
        testing::ExitedWithCode(1), "");
    EXPECT_FALSE(std::filesystem::exists(output));
}

TEST(Interruption, WithoutASignalTheProcessEndsAsItWouldAndRemovesNothing) {
    spillway::test::TemporaryDirectory directory;
    auto const output = make_directory(directory.path() / "output");
    EXPECT_EXIT(
        {
            {
                InterruptionHandler const handler;
                RemoveOnInterruption const removal(output);
            }
            std::exit(7);
        },
        testing::ExitedWithCode(7), "");
    EXPECT_TRUE(std::filesystem::exists(output / "file"));
}
