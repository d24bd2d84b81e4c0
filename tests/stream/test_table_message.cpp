// Tables as messages: pack_table and unpack_table, through a channel that
// spills them.
#include <spillway/stream/table_message.hpp>

#include <common/error_matchers.hpp>

#include <optional>

#include <spillway/core/error.hpp>
#include <spillway/exec/sync_wait.hpp>
#include <spillway/memory/host_allocator.hpp>
#include <spillway/stream/channel.hpp>
#include <spillway/table/packed_table.hpp>

#include <gtest/gtest.h>

#include <exec/deterministic_executor.hpp>
#include <table/random_table.hpp>

#include "stream_test_support.hpp"

using namespace spillway;
using namespace spillway::stream;
using namespace spillway::test;

TEST(TableMessage, ATableComesBackWholeAfterItsMessageSpilled) {
    StreamMemory memory;
    RandomChooser chooser(1);
    DeterministicExecutor executor(chooser);
    Context context(executor, memory.resource);
    Channel channel(context, ChannelLimits::unbounded());
    auto const table = table::test::random_table(500, 11, 0.2);
    exec::sync_wait(executor, [&]() -> exec::Task<void> {
        Message message = co_await pack_table(context, 42, table);
        EXPECT_EQ(message.payload.data.size(), table::packed_size(table));
        EXPECT_EQ(memory.resource.memory_used(memory::MemoryType::HOST), table::packed_size(table));
        co_await channel.send(std::move(message));
    }());
    ASSERT_EQ(memory.resource.spill_manager().spill(table::packed_size(table)), table::packed_size(table));
    std::optional<Message> received = exec::sync_wait(executor, channel.receive());
    ASSERT_TRUE(received.has_value());
    EXPECT_EQ(received->sequence, 42U);
    {
        memory::ScopedHostResource const scope(&memory.resource);
        auto const unpacked = unpack_table(*received);
        EXPECT_EQ(unpacked, table);
        // The unpacked columns count against the pipeline's limit too.
        EXPECT_GT(memory.resource.memory_used(memory::MemoryType::HOST), table::packed_size(table));
    }
}

TEST(TableMessage, UnpackingAMessageThatHoldsNoTableFailsClearly) {
    StreamMemory memory;
    Message message = test_message(memory.resource, 0, 100);
    EXPECT_THROW_WITH(unpack_table(message), CorruptData, "packed table metadata is 8 bytes");
}

TEST(TableMessage, UnpackingAMessageWhoseBufferWasMovedFromIsMisuse) {
    StreamMemory memory;
    Message message = test_message(memory.resource, 0, 100);
    memory::Buffer const taken = std::move(message.payload.data);
    EXPECT_THROW_WITH(unpack_table(message), InvalidArgument, "moved from");
}
