#pragma once
/// @file
/// What the tests of stream/ share: a pipeline's memory, and messages whose
/// bytes tell where they came from.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include <common/temporary_directory.hpp>

#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/host_allocator.hpp>
#include <spillway/stream/actor.hpp>
#include <spillway/stream/channel.hpp>
#include <spillway/stream/context.hpp>
#include <spillway/stream/message.hpp>
#include <spillway/stream/table_message.hpp>
#include <spillway/table/tpch_generator.hpp>

#include <gtest/gtest.h>

#include <memory/memory_test_support.hpp>

namespace spillway::test {

inline constexpr std::size_t kibibyte = 1024;

/// A spill directory and a resource with a HOST limit of `host_limit`.
struct StreamMemory {
    explicit StreamMemory(std::size_t host_limit = 64 * mebibyte) : resource(test_config(root, host_limit)) {}
    TemporaryDirectory root;
    memory::BufferResource resource;
};

/// The 8 bytes of `value`, as message metadata.
inline std::vector<std::byte> metadata_of(std::uint64_t value) {
    std::vector<std::byte> bytes(sizeof value);
    std::memcpy(bytes.data(), &value, sizeof value);
    return bytes;
}

/// A message numbered `sequence` of `size` bytes drawn from `sequence`, and
/// metadata that repeats the number; its buffer is reserved without spilling.
inline stream::Message test_message(memory::BufferResource& resource, std::uint64_t sequence, std::size_t size) {
    return stream::Message{
        .sequence = sequence,
        .payload = shuffle::PackedData{
            .metadata = metadata_of(sequence), .data = make_host_buffer(resource, test_bytes(size, sequence))
        },
    };
}

/// Checks that `message` is the `test_message` numbered `sequence` of
/// `size` bytes, in HOST memory.
inline void expect_test_message(stream::Message const& message, std::uint64_t sequence, std::size_t size) {
    EXPECT_EQ(message.sequence, sequence);
    EXPECT_EQ(message.payload.metadata, metadata_of(sequence));
    ASSERT_EQ(message.payload.data.mem_type(), memory::MemoryType::HOST);
    EXPECT_EQ(contents(message.payload.data), test_bytes(size, sequence)) << "message " << sequence;
}

/// 0, 1, ..., count - 1.
inline std::vector<std::uint64_t> iota(std::size_t count) {
    std::vector<std::uint64_t> numbers(count);
    for (std::uint64_t i = 0; i < count; ++i) {
        numbers[i] = i;
    }
    return numbers;
}

/// An actor that sends the lineitem chunks first, first + step, ... of
/// `generator` to `output`, each a table numbered by its chunk.
inline stream::Actor generate_lineitem(
    stream::Context& context, table::TpchGenerator const& generator, std::size_t first, std::size_t step,
    stream::Channel& output
) {
    stream::CloseAtExit closer{&output};
    for (std::size_t chunk = first; chunk < generator.num_chunks(); chunk += step) {
        std::optional<table::Table> table;
        {
            // No co_await inside: a scope ends on the thread that began it.
            memory::ScopedHostResource const scope(&context.resource());
            table = generator.lineitem(chunk);
        }
        stream::Message message = co_await stream::pack_table(context, chunk, *table);
        table.reset();
        if (!co_await output.send(std::move(message))) {
            co_return;
        }
    }
}

}  // namespace spillway::test
