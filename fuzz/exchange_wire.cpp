/// @file
/// Fuzzes what a shuffle does with the messages a peer sends it: the wire
/// format of the exchange (docs/architecture.md, "shuffle/"), the finish
/// protocol, the transit checksum, inline metadata, and the chunks handed
/// out and unpacked.
///
/// Input: `read_wire_input`, at most 64 messages. Rank 0 of a two-rank local
/// group sends them on the tag of the shuffle that rank 1 runs (4
/// partitions, so rank 1 owns 1 and 3). The harness writes the right transit
/// checksum into each chunk's header unless the message says to keep it,
/// and ends rank 0's input with a right finish message unless a finish or
/// an abandon message was among them. Rank 1 then extracts and unpacks every
/// partition. Every error must be a spillway error; anything else, a crash
/// or a hang is a finding.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include <spillway/comm/local_communicator.hpp>
#include <spillway/core/error.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/shuffle/shuffler.hpp>
#include <spillway/table_shuffle/packed_partitions.hpp>

#include "shuffle/wire_format.hpp"
#include "wire_input.hpp"

namespace {

using namespace spillway;
using shuffle::detail::MessageKind;
using shuffle::detail::WireHeader;

constexpr std::size_t max_messages = 64;
constexpr shuffle::PartitionId partitions = 4;
constexpr shuffle::OpId op_id = 0;
constexpr comm::Tag shuffler_tag = 2 * op_id;  // docs/architecture.md, "Tags"

/// The two ranks' resources, made once: each makes a spill directory.
memory::BufferResource& resource(std::size_t rank) {
    static auto const make = [] {
        memory::MemoryConfig config;
        config.host_limit = SizeSpec::bytes(std::uint64_t{64} << 20);
        config.spill_directory = std::filesystem::temp_directory_path() / "spillway-fuzz-exchange";
        return std::make_unique<memory::BufferResource>(config);
    };
    static std::unique_ptr<memory::BufferResource> const resources[] = {make(), make()};
    return *resources[rank];
}

/// Sends `message` from `sender` to rank 1, its checksum made right unless
/// the message keeps it.
void send(comm::Communicator& sender, fuzz::WireMessageInput const& message) {
    auto header = message.header;
    auto const body = message.body.first(std::min(message.body.size(), shuffle::max_packed_metadata_size));
    std::optional<memory::Buffer> payload;
    if (message.payload) {
        auto& memory = resource(0);
        auto reservation =
            memory.reserve(memory::MemoryType::HOST, message.payload->size(), memory::AllowOverbooking::yes);
        payload = memory.make_buffer(message.payload->size(), reservation);
        std::ranges::copy(*message.payload, payload->data().begin());
    }
    if (!message.keep_checksum && header.kind == MessageKind::chunk) {
        header.checksum = shuffle::detail::transit_checksum(payload ? payload->data() : std::span<std::byte>{}, body);
    }
    sender.send(1, shuffler_tag, shuffle::detail::encode(header, body), std::move(payload));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    auto const messages = fuzz::read_wire_input(std::as_bytes(std::span(data, size)), max_messages);
    memory::BufferResource* const resources[] = {&resource(0), &resource(1)};
    // A group per input: what is left queued is dropped with it. Its fault
    // changes nothing, but makes payloads ones that may change in transit, so
    // that the receiver checks each chunk's checksum, as over MPI.
    auto const group = comm::LocalCommunicator::make_group(
        resources, [](comm::Rank, comm::Rank, std::span<std::byte>) {}
    );
    auto& sender = *group[0];
    auto& receiver = *group[1];
    shuffle::Shuffler shuffler(receiver, op_id, partitions, resource(1));
    std::uint64_t chunks = 0;
    bool closed = false;
    for (auto const& message : messages) {
        send(sender, message);
        chunks += message.header.kind == MessageKind::chunk ? 1 : 0;
        closed = closed || message.header.kind == MessageKind::finish || message.header.kind == MessageKind::abandon;
    }
    if (!closed) {
        sender.send(1, shuffler_tag, shuffle::detail::encode(WireHeader{MessageKind::finish, {}, 0, 0, chunks}));
    }
    try {
        shuffler.insert_finished();
        while (auto const partition = shuffler.wait_any()) {
            auto const chunk_data = shuffler.extract(*partition);
            try {
                (void)table_shuffle::unpack(chunk_data);
            } catch (Error const&) {
                // chunks that are not packed tables of one schema: the caller's to report
            }
        }
    } catch (Error const&) {
        // the shuffle failed with a spillway error: the documented outcome
    }
    return 0;
}
