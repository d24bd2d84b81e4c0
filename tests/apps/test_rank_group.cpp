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

TEST(RankGroup, ThrowsTheCauseOfAFailureRatherThanItsEchoInAnotherRankThatFailedFirst) {
    Options options;
    options.set("ranks", "2").set("memory_limit_host", "64MiB");
    RankGroup ranks(options, memory::MemoryConfig::from_options(options), 2);
    EXPECT_THROW_WITH(ranks.run([](comm::Communicator& communicator) {
        if (communicator.rank() == 1) {
            InvalidArgument echo("shuffle op 1 on rank 1 failed because rank 0 gave up: it was destroyed");
            echo.mark_relayed_from_peer();
            throw echo;
        }
        // The cause reaches the group later than its echo, as it does when
        // a failed rank's collectives are destroyed while its error unwinds.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        throw OutOfMemory("cannot reserve 1.26 MiB of HOST");
    }),
                      OutOfMemory, "cannot reserve 1.26 MiB of HOST");
}

TEST(RankGroup, ANotedEchoGivesWayToACauseNotedLater) {
    Options options;
    options.set("ranks", "2").set("memory_limit_host", "64MiB");
    RankGroup ranks(options, memory::MemoryConfig::from_options(options), 2);
    EXPECT_THROW_WITH(ranks.run([&ranks](comm::Communicator& communicator) {
        try {
            if (communicator.rank() == 1) {
                CorruptData echo("shuffle op 1 on rank 1 failed because rank 0 gave up: a chunk failed its checksum");
                echo.mark_relayed_from_peer();
                throw echo;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            throw CorruptData("shuffle op 1: a chunk from rank 1 failed its checksum");
        } catch (...) {
            ranks.note_failure(std::current_exception());
            throw;
        }
    }),
                      CorruptData, "shuffle op 1: a chunk from rank 1 failed its checksum");
}
