#include <spillway/shuffle/partition_owner.hpp>

#include <common/error_matchers.hpp>

#include <spillway/core/error.hpp>
#include <spillway/shuffle/shuffle_config.hpp>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::shuffle;

TEST(PartitionOwner, RoundRobinDealsPartitionsOutInTurn) {
    EXPECT_EQ(partition_owner(PartitionOwner::round_robin, 0, 10, 3), 0);
    EXPECT_EQ(partition_owner(PartitionOwner::round_robin, 4, 10, 3), 1);
    EXPECT_EQ(partition_owner(PartitionOwner::round_robin, 8, 10, 3), 2);
    EXPECT_EQ(owned_partitions(PartitionOwner::round_robin, 10, 3, 1), (std::vector<PartitionId>{1, 4, 7}));
}

TEST(PartitionOwner, ContiguousGivesEachRankOneNearlyEqualRange) {
    EXPECT_EQ(owned_partitions(PartitionOwner::contiguous, 10, 3, 0), (std::vector<PartitionId>{0, 1, 2}));
    EXPECT_EQ(owned_partitions(PartitionOwner::contiguous, 10, 3, 1), (std::vector<PartitionId>{3, 4, 5}));
    EXPECT_EQ(owned_partitions(PartitionOwner::contiguous, 10, 3, 2), (std::vector<PartitionId>{6, 7, 8, 9}));
    // Fewer partitions than ranks: some ranks own none.
    EXPECT_TRUE(owned_partitions(PartitionOwner::contiguous, 2, 4, 0).empty());
    EXPECT_EQ(owned_partitions(PartitionOwner::contiguous, 2, 4, 1), (std::vector<PartitionId>{0}));
    EXPECT_EQ(owned_partitions(PartitionOwner::contiguous, 2, 4, 3), (std::vector<PartitionId>{1}));
}

TEST(PartitionOwner, EveryPartitionHasExactlyOneOwnerWithinItsRanks) {
    for (auto const owner : {PartitionOwner::round_robin, PartitionOwner::contiguous}) {
        for (comm::Rank nranks = 1; nranks <= 9; ++nranks) {
            for (PartitionId total = 1; total <= 40; ++total) {
                std::vector<int> owners(total, 0);
                std::size_t largest = 0;
                std::size_t smallest = total;
                for (comm::Rank rank = 0; rank < nranks; ++rank) {
                    auto const mine = owned_partitions(owner, total, nranks, rank);
                    largest = std::max(largest, mine.size());
                    smallest = std::min(smallest, mine.size());
                    for (auto const partition : mine) {
                        ++owners[partition];
                        EXPECT_EQ(partition_owner(owner, partition, total, nranks), rank);
                    }
                }
                EXPECT_EQ(std::count(owners.begin(), owners.end(), 1), static_cast<std::ptrdiff_t>(total));
                EXPECT_LE(largest - smallest, 1U) << "unbalanced for " << total << " partitions on " << nranks;
            }
        }
    }
}

TEST(ShuffleConfig, ReadsItsOptionsAndKeepsTheDefaultsOtherwise) {
    auto const defaults = ShuffleConfig::from_options(Options());
    EXPECT_EQ(defaults.send_window, SizeSpec::percent(25));
    EXPECT_EQ(defaults.prefetch, SizeSpec::percent(10));
    auto const options = Options::from_environment({"SPILLWAY_SHUFFLE_SEND_WINDOW=64MiB", "SPILLWAY_SHUFFLE_PREFETCH=0"});
    auto const config = ShuffleConfig::from_options(options);
    EXPECT_EQ(config.send_window, SizeSpec::bytes(64 << 20));
    EXPECT_EQ(config.prefetch, SizeSpec::bytes(0));
    EXPECT_THROW_WITH(
        ShuffleConfig::from_options(Options().set("shuffle_prefetch", "lots")), InvalidArgument, "shuffle_prefetch"
    );
}

TEST(ShuffleConfig, TheCollectiveTimeoutIsAMinuteByDefaultAndMustBePositive) {
    EXPECT_EQ(ShuffleConfig::from_options(Options()).collective_timeout, std::chrono::seconds(60));
    EXPECT_EQ(ShuffleConfig::from_options(Options().set("collective_timeout", "90s")).collective_timeout,
              std::chrono::seconds(90));
    EXPECT_THROW_WITH(ShuffleConfig::from_options(Options().set("collective_timeout", "0")), InvalidArgument,
                      "option 'collective_timeout': invalid value '0': expected a duration above zero");
}
