#include <spillway/shuffle/shuffler.hpp>

#include <spillway/core/error.hpp>

#include "shuffle/exchange.hpp"

namespace spillway::shuffle {
namespace {

/// `communicator` after checking the arguments that must hold before the
/// exchange starts.
comm::Communicator& checked(
    comm::Communicator& communicator, OpId op_id, PartitionId total_partitions,
    memory::BufferResource const& buffer_resource
) {
    SPILLWAY_EXPECTS(
        &buffer_resource == &communicator.buffer_resource(),
        "Shuffler op " << op_id << ": the BufferResource must be the communicator's (received chunks are its buffers)",
        InvalidArgument
    );
    SPILLWAY_EXPECTS(total_partitions > 0, "Shuffler op " << op_id << ": a shuffle needs at least one partition", InvalidArgument);
    return communicator;
}

}  // namespace

Shuffler::Shuffler(
    comm::Communicator& communicator, OpId op_id, PartitionId total_partitions,
    memory::BufferResource& buffer_resource, PartitionOwner owner, ShuffleConfig const& config
)
    : communicator_(checked(communicator, op_id, total_partitions, buffer_resource)),
      op_id_(op_id),
      total_partitions_(total_partitions),
      owner_(owner),
      exchange_(std::make_unique<detail::Exchange>(
          communicator, op_id, detail::Collective::shuffler, detail::Exchange::Layout{total_partitions, owner},
          owned_partitions(owner, total_partitions, communicator.nranks(), communicator.rank()), config
      )) {}

Shuffler::~Shuffler() = default;

std::size_t Shuffler::bytes_per_partition() noexcept { return detail::Exchange::partition_bookkeeping_bytes; }

std::size_t Shuffler::bytes_per_chunk() noexcept { return detail::Exchange::chunk_bookkeeping_bytes(); }

void Shuffler::end_early_quietly() noexcept { exchange_->end_early_quietly(); }

void Shuffler::insert(std::unordered_map<PartitionId, PackedData> chunks) {
    std::vector<detail::Exchange::Item> items;
    items.reserve(chunks.size());
    auto sequence = next_sequence_.fetch_add(chunks.size(), std::memory_order_relaxed);
    for (auto& [partition, data] : chunks) {
        items.push_back({owner_of(partition), partition, sequence++, std::move(data)});
    }
    exchange_->insert(std::move(items));
}

void Shuffler::insert_finished() {
    exchange_->insert_finished();
}

std::optional<PartitionId> Shuffler::wait_any() {
    return exchange_->wait_any();
}

Shuffler::Poll Shuffler::poll_any() {
    auto [partition, done] = exchange_->poll_any();
    return Poll{.partition = partition, .done = done};
}

void Shuffler::wait(PartitionId partition) {
    check_local(partition, "wait");
    exchange_->wait(partition);
}

std::vector<PackedData> Shuffler::extract(PartitionId partition) {
    check_local(partition, "extract");
    return exchange_->extract(partition, true);
}

std::optional<PackedData> Shuffler::extract_chunk(PartitionId partition) {
    check_local(partition, "extract_chunk");
    return exchange_->extract_chunk(partition);
}

bool Shuffler::finished() const {
    return exchange_->finished();
}

comm::Rank Shuffler::owner_of(PartitionId partition) const {
    SPILLWAY_EXPECTS(
        partition < total_partitions_,
        "Shuffler op " << op_id_ << ": unknown partition " << partition << "; the shuffle has " << total_partitions_
                       << " partitions",
        InvalidArgument
    );
    return partition_owner(owner_, partition, total_partitions_, communicator_.nranks());
}

std::vector<PartitionId> const& Shuffler::local_partitions() const noexcept {
    return exchange_->local_partitions();
}

void Shuffler::check_local(PartitionId partition, char const* what) const {
    auto const owner = owner_of(partition);
    SPILLWAY_EXPECTS(
        owner == communicator_.rank(),
        "Shuffler op " << op_id_ << ": " << what << " of partition " << partition << ", which rank " << owner
                       << " owns, not this rank (" << communicator_.rank() << "); only its owner can wait for or "
                                                                             "extract a partition",
        InvalidArgument
    );
}

}  // namespace spillway::shuffle
