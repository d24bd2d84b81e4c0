#pragma once
/// @file
/// What the shuffle tests share: a suite that runs on every communicator
/// backend, and chunks that name their origin and carry a checkable pattern
/// (statistics lookups come from the memory tests' support).

#include <chrono>
#include <cstdint>

#include <spillway/memory/buffer_resource.hpp>
#include <spillway/shuffle/packed_data.hpp>

#include <common/watchdog.hpp>

#include <gtest/gtest.h>

#include <comm/communicator_testing.hpp>
#include <memory/memory_test_support.hpp>

namespace spillway::test {

/// A suite parameterised by the communicator backend, whose `run` fails
/// (aborting with a message) rather than hangs if a collective deadlocks.
class CollectiveTest : public ::testing::TestWithParam<CommunicatorBackend> {
  protected:
    /// Runs `body` on every rank of the backend (see `run_on_every_rank`).
    void run(RankBody const& body) {
        Watchdog watchdog("a collective test", std::chrono::seconds(240));
        run_on_every_rank(GetParam(), body);
    }
};

/// Where a test chunk comes from: enough to recompute its bytes.
struct ChunkOrigin {
    std::uint64_t source = 0;     ///< inserting rank
    std::uint64_t stream = 0;     ///< inserting thread, or test-defined
    std::uint64_t index = 0;      ///< position in its stream
    std::uint64_t partition = 0;  ///< partition (or round, for all-gathers)
    std::uint64_t size = 0;       ///< payload bytes

    /// The seed of the payload pattern.
    [[nodiscard]] std::uint64_t seed() const noexcept {
        return ((source * 131 + stream) * 1000003 + index) * 8191 + partition;
    }
    friend auto operator<=>(ChunkOrigin const&, ChunkOrigin const&) = default;
};

/// A chunk of `resource` whose metadata is `origin` and whose payload is the
/// pattern of `origin.seed()`.
inline shuffle::PackedData make_chunk(memory::BufferResource& resource, ChunkOrigin const& origin) {
    return shuffle::PackedData{
        metadata_of({origin.source, origin.stream, origin.index, origin.partition, origin.size}),
        make_payload(resource, origin.size, origin.seed())
    };
}

/// The origin a chunk's metadata names; checks that its payload matches.
inline ChunkOrigin check_chunk(shuffle::PackedData const& chunk) {
    ChunkOrigin const origin{
        metadata_value(chunk.metadata, 0), metadata_value(chunk.metadata, 1), metadata_value(chunk.metadata, 2),
        metadata_value(chunk.metadata, 3), metadata_value(chunk.metadata, 4)
    };
    EXPECT_EQ(chunk.metadata.size(), 5 * sizeof(std::uint64_t));
    EXPECT_EQ(chunk.data.mem_type(), memory::MemoryType::HOST);
    EXPECT_TRUE(holds_pattern(chunk.data, origin.size, origin.seed()));
    return origin;
}

}  // namespace spillway::test
