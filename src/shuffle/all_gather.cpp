#include <spillway/shuffle/all_gather.hpp>

#include <algorithm>

#include <spillway/core/error.hpp>

#include "shuffle/exchange.hpp"

namespace spillway::shuffle {
namespace {

/// The one partition of an all-gather, which every rank owns.
constexpr PartitionId gathered = 0;

memory::BufferResource& checked(
    comm::Communicator const& communicator, OpId op_id, memory::BufferResource& buffer_resource
) {
    SPILLWAY_EXPECTS(
        &buffer_resource == &communicator.buffer_resource(),
        "AllGather op " << op_id << ": the BufferResource must be the communicator's (received chunks are its buffers)",
        InvalidArgument
    );
    return buffer_resource;
}

/// A HOST copy of `buffer`'s bytes. Requires: `buffer` is in HOST memory.
memory::Buffer copy_of(memory::BufferResource& resource, memory::Buffer const& buffer) {
    auto reservation =
        resource.reserve_and_spill(memory::MemoryType::HOST, buffer.size(), memory::AllowOverbooking::yes);
    auto copy = resource.make_buffer(buffer.size(), reservation);
    std::ranges::copy(buffer.data(), copy.data().begin());
    return copy;
}

}  // namespace

AllGather::AllGather(
    comm::Communicator& communicator, OpId op_id, memory::BufferResource& buffer_resource, ShuffleConfig const& config
)
    : resource_(checked(communicator, op_id, buffer_resource)),
      communicator_(communicator),
      exchange_(std::make_unique<detail::Exchange>(
          communicator, op_id, detail::Collective::all_gather, detail::Exchange::Layout{},
          std::vector<PartitionId>{gathered}, config
      )) {}

AllGather::~AllGather() = default;

void AllGather::insert(std::uint64_t sequence, PackedData data) {
    SPILLWAY_EXPECTS(
        data.data.resource() == &resource_,
        "AllGather: insert needs a buffer of the all-gather's BufferResource (this one is of another, or moved "
        "from)",
        InvalidArgument
    );
    if (data.data.mem_type() != memory::MemoryType::HOST && communicator_.nranks() > 1) {
        auto reservation = resource_.reserve_and_spill(
            memory::MemoryType::HOST, data.data.size(), memory::AllowOverbooking::yes
        );
        data.data = resource_.move(std::move(data.data), reservation);
    }
    std::vector<detail::Exchange::Item> items;
    items.reserve(static_cast<std::size_t>(communicator_.nranks()));
    for (comm::Rank rank = 0; rank < communicator_.nranks(); ++rank) {
        if (rank != communicator_.rank()) {
            items.push_back({rank, gathered, sequence, PackedData{data.metadata, copy_of(resource_, data.data)}});
        }
    }
    items.push_back({communicator_.rank(), gathered, sequence, std::move(data)});
    exchange_->insert(std::move(items));
}

void AllGather::insert_finished() {
    exchange_->insert_finished();
}

std::vector<PackedData> AllGather::wait_and_extract(Ordered ordered) {
    exchange_->wait(gathered);
    auto chunks = exchange_->extract(gathered, ordered == Ordered::yes);
    complete_.store(true, std::memory_order_release);
    return chunks;
}

bool AllGather::poll() {
    if (!complete_.load(std::memory_order_acquire)) {
        auto const [partition, done] = exchange_->poll_any();
        if (partition || done) {
            complete_.store(true, std::memory_order_release);
        }
    }
    return complete_.load(std::memory_order_acquire);
}

std::optional<PackedData> AllGather::extract_chunk() {
    SPILLWAY_EXPECTS(complete_.load(std::memory_order_acquire),
                     "AllGather::extract_chunk before poll() returned true: chunks may still be arriving",
                     InvalidArgument);
    return exchange_->extract_chunk(gathered);
}

bool AllGather::finished() const {
    return exchange_->finished();
}

}  // namespace spillway::shuffle
