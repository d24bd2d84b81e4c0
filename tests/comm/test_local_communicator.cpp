#include <spillway/comm/local_communicator.hpp>

#include <common/error_matchers.hpp>

#include <span>
#include <vector>

#include <spillway/core/error.hpp>

#include <gtest/gtest.h>

#include <comm/communicator_testing.hpp>

using namespace spillway;
using namespace spillway::comm;
using spillway::test::holds_pattern;
using spillway::test::make_payload;
using spillway::test::probe_until;

namespace {

/// Two ranks with resources of their own.
struct TwoRanks {
    memory::BufferResource first;
    memory::BufferResource second;
    std::vector<memory::BufferResource*> resources{&first, &second};
    std::vector<std::unique_ptr<Communicator>> group = LocalCommunicator::make_group(resources);
};

}  // namespace

TEST(LocalCommunicator, MakeGroupRejectsAnEmptyGroupAndNullResources) {
    EXPECT_THROW_WITH(LocalCommunicator::make_group({}), InvalidArgument, "at least one rank");
    memory::BufferResource resource;
    std::vector<memory::BufferResource*> resources{&resource, nullptr};
    EXPECT_THROW_WITH(LocalCommunicator::make_group(resources), InvalidArgument, "null");
}

TEST(LocalCommunicator, PayloadsChangeHandsWithoutCopyingAndTheirBytesChangeAccounts) {
    TwoRanks ranks;
    auto payload = make_payload(ranks.first, 5000, 1);
    auto const* const bytes = payload.data().data();
    auto sent = ranks.group[0]->send(1, 0, {}, std::move(payload));
    EXPECT_EQ(ranks.first.memory_used(memory::MemoryType::HOST), 5000U);

    auto reservation = ranks.second.reserve(memory::MemoryType::HOST, 5000, memory::AllowOverbooking::no);
    auto message = ranks.group[1]->receive(probe_until(*ranks.group[1], 0), reservation).get();
    ASSERT_TRUE(message.payload.has_value());
    EXPECT_EQ(message.payload->data().data(), bytes);
    EXPECT_TRUE(holds_pattern(*message.payload, 5000, 1));
    EXPECT_EQ(ranks.first.memory_used(memory::MemoryType::HOST), 0U);
    EXPECT_EQ(ranks.second.memory_used(memory::MemoryType::HOST), 5000U);
    EXPECT_TRUE(sent.test());
}

TEST(LocalCommunicator, PayloadsMayChangeInTransitOnlyWhereAFaultIsInjected) {
    TwoRanks ranks;
    EXPECT_FALSE(ranks.group[0]->payloads_may_change_in_transit(1));
    EXPECT_FALSE(ranks.group[1]->payloads_may_change_in_transit(0));
    auto const faulty = LocalCommunicator::make_group(ranks.resources, [](Rank, Rank, std::span<std::byte>) {});
    EXPECT_TRUE(faulty[0]->payloads_may_change_in_transit(1));
    EXPECT_TRUE(faulty[1]->payloads_may_change_in_transit(0));
}

TEST(LocalCommunicator, ASendCompletesWhenItsMessageIsReceivedOrDropped) {
    TwoRanks ranks;
    auto received = ranks.group[0]->send(1, 0, {}, make_payload(ranks.first, 100, 1));
    auto dropped = ranks.group[0]->send(1, 0, {});
    EXPECT_FALSE(received.test());
    EXPECT_FALSE(dropped.test());

    auto incoming = probe_until(*ranks.group[1], 0);
    EXPECT_FALSE(received.test());
    auto reservation = ranks.second.reserve(memory::MemoryType::HOST, 100, memory::AllowOverbooking::no);
    static_cast<void>(ranks.group[1]->receive(std::move(incoming), reservation).get());
    EXPECT_TRUE(received.test());

    static_cast<void>(probe_until(*ranks.group[1], 0));
    EXPECT_TRUE(dropped.test());
}

TEST(LocalCommunicator, DestroyingARankDropsItsWaitingMessagesAndRefusesNewOnes) {
    TwoRanks ranks;
    auto waiting = ranks.group[0]->send(1, 0, {}, make_payload(ranks.first, 100, 1));
    ranks.group[1].reset();
    EXPECT_TRUE(waiting.test());
    EXPECT_EQ(ranks.first.memory_used(memory::MemoryType::HOST), 0U);
    EXPECT_THROW_WITH(
        ranks.group[0]->send(1, 0, {}, make_payload(ranks.first, 100, 2)), InvalidArgument, "has been destroyed"
    );
    EXPECT_EQ(ranks.first.memory_used(memory::MemoryType::HOST), 0U);
}

TEST(LocalCommunicator, AnIncomingOfAnotherCommunicatorIsRejected) {
    TwoRanks ranks;
    auto sent = ranks.group[0]->send(1, 0, {});
    auto incoming = probe_until(*ranks.group[1], 0);
    EXPECT_THROW_WITH(
        static_cast<void>(ranks.group[0]->receive(std::move(incoming))), InvalidArgument, "another communicator"
    );
    static_cast<void>(ranks.group[1]->receive(std::move(incoming)).get());
    EXPECT_TRUE(sent.test());
}
