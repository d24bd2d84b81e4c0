#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>
#include <spillway/memory/memory_config.hpp>

#include <common/error_matchers.hpp>

#include "rank_group.hpp"

using namespace spillway;
using namespace spillway::cli;

namespace {

/// Two in-process ranks sharing 64 MiB.
Options two_ranks() {
    Options options;
    options.set("ranks", "2").set("memory_limit_host", "64MiB");
    return options;
}

/// Throws `echo` on rank 1 at once, marked as relayed from rank 0, and
/// `cause` on rank 0 100 ms later: the cause reaches the group after its
/// echo, as it does when a failed rank's collectives are destroyed while its
/// error unwinds.
template <typename Echo, typename Cause>
[[noreturn]] void echo_before_cause(comm::Communicator const& communicator, Echo echo, Cause const& cause) {
    if (communicator.rank() == 1) {
        echo.mark_relayed_from_peer();
        throw echo;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    throw cause;
}

}  // namespace

TEST(RankGroup, ThrowsTheCauseOfAFailureRatherThanItsEchoInAnotherRankThatFailedFirst) {
    RankGroup ranks(two_ranks(), memory::MemoryConfig::from_options(two_ranks()), 2);
    EXPECT_THROW_WITH(ranks.run([](comm::Communicator& communicator) {
        echo_before_cause(communicator,
                          InvalidArgument("shuffle op 1 on rank 1 failed because rank 0 gave up: it was destroyed"),
                          OutOfMemory("cannot reserve 1.26 MiB of HOST"));
    }),
                      OutOfMemory, "cannot reserve 1.26 MiB of HOST");
}

TEST(RankGroup, ANotedEchoGivesWayToACauseNotedLater) {
    RankGroup ranks(two_ranks(), memory::MemoryConfig::from_options(two_ranks()), 2);
    EXPECT_THROW_WITH(ranks.run([&ranks](comm::Communicator& communicator) {
        try {
            echo_before_cause(
                communicator,
                CorruptData("shuffle op 1 on rank 1 failed because rank 0 gave up: a chunk failed its checksum"),
                CorruptData("shuffle op 1: a chunk from rank 1 failed its checksum")
            );
        } catch (...) {
            ranks.note_failure(std::current_exception());
            throw;
        }
    }),
                      CorruptData, "shuffle op 1: a chunk from rank 1 failed its checksum");
}
