#include "table_shuffler.hpp"

#include <algorithm>

#include <spillway/core/error.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table/table_builder.hpp>
#include <spillway/table_shuffle/packed_partitions.hpp>

namespace spillway::python {
namespace {

std::vector<std::string> nonempty(std::vector<std::string> keys) {
    SPILLWAY_EXPECTS(!keys.empty(), "a shuffle needs at least one key column", InvalidArgument);
    return keys;
}

/// The coalescer's budget for `partitions` on `resource`: see the class comment.
std::size_t coalescer_budget(memory::BufferResource const& resource, shuffle::PartitionId partitions) {
    return std::min(std::size_t{partitions} * table_shuffle::ChunkCoalescer::bytes_per_partition,
                    static_cast<std::size_t>(resource.memory_limit(memory::MemoryType::HOST) / 8));
}

}  // namespace

TableShuffler::TableShuffler(comm::Communicator& communicator, shuffle::OpId op_id, std::vector<std::string> keys,
                             shuffle::PartitionId partitions, shuffle::ShuffleConfig const& config)
    : communicator_(communicator),
      keys_(nonempty(std::move(keys))),
      shuffler_(communicator, op_id, partitions, communicator.buffer_resource(), shuffle::PartitionOwner::round_robin,
                config),
      coalescer_budget_(coalescer_budget(communicator.buffer_resource(), partitions)),
      coalescer_(communicator.buffer_resource(), partitions, coalescer_budget_) {}

std::vector<std::size_t> TableShuffler::expect_schema(table::Schema const& schema) {
    MutexLock lock(mutex_);
    if (!schema_) {
        std::vector<std::size_t> key_columns;
        for (auto const& key : keys_) {
            key_columns.push_back(schema.index_of(key));
        }
        key_columns_ = std::move(key_columns);
        schema_ = schema;
    }
    SPILLWAY_EXPECTS(schema == *schema_,
                     "every table of a shuffle must have one schema: " << schema_->to_string() << "; this one has "
                                                                       << schema.to_string(),
                     InvalidArgument);
    return key_columns_;
}

bool TableShuffler::insert_next(io::TableFileReader& reader) {
    auto const key_columns = expect_schema(reader.schema());
    auto table = reader.read();
    if (!table) {
        return false;
    }
    if (table->num_rows() == 0) {
        return true;
    }
    auto partition_of_row = table::partition_rows(*table, key_columns, shuffler_.total_partitions());
    table_shuffle::ChunkCoalescer::Chunks chunks;
    {
        // Charged under the lock: a charge taken while another insert packs
        // (waiting for memory under the lock) could keep the memory it waits for.
        MutexLock lock(coalescer_mutex_);
        // A table small enough to be held is charged while it is; a larger
        // one is packed and freed within this call, as the caller's batch it is.
        memory::MemoryReservation charge;
        if (table->byte_size() <= coalescer_budget_) {
            charge = communicator_.buffer_resource().reserve_or_wait(table->byte_size());
        }
        held_charges_.push_back(std::move(charge));
        chunks = coalescer_.add(std::move(*table), std::move(partition_of_row));
        if (coalescer_.held_bytes() == 0) {
            held_charges_.clear();
        }
    }
    shuffler_.insert(std::move(chunks));
    return true;
}

void TableShuffler::insert(io::TableFileReader& reader) {
    while (insert_next(reader)) {
    }
}

void TableShuffler::insert_finished() {
    table_shuffle::ChunkCoalescer::Chunks chunks;
    {
        MutexLock lock(coalescer_mutex_);
        chunks = coalescer_.flush();
        held_charges_.clear();
    }
    if (!chunks.empty()) {  // a second call has none, and is then refused as such
        shuffler_.insert(std::move(chunks));
    }
    shuffler_.insert_finished();
}

void TableShuffler::discard_held() noexcept {
    MutexLock lock(coalescer_mutex_);
    coalescer_.discard();
    held_charges_.clear();
}

std::optional<table::Table> TableShuffler::extract(shuffle::PartitionId partition) {
    SPILLWAY_EXPECTS(partition < shuffler_.total_partitions(),
                     "partition " << partition << " is out of range: the shuffle has " << shuffler_.total_partitions(),
                     InvalidArgument);
    shuffler_.wait(partition);
    auto const chunks = shuffler_.extract(partition);
    if (!chunks.empty()) {
        auto table = table_shuffle::unpack(chunks);
        expect_received_schema(partition, table.schema());
        return table;
    }
    if (auto const known = schema()) {
        return table::TableBuilder(*known).finish();
    }
    return std::nullopt;
}

void TableShuffler::expect_received_schema(shuffle::PartitionId partition, table::Schema const& schema) {
    MutexLock lock(mutex_);
    auto const& expected = schema_ ? *schema_ : received_schema_.emplace(schema);
    SPILLWAY_EXPECTS(schema == expected,
                     "partition " << partition << " holds rows of " << schema.to_string() << ", but "
                                  << (schema_ ? "this rank inserted " : "a partition before it held ")
                                  << expected.to_string() << ": every rank must insert tables of one schema",
                     InvalidArgument);
}

std::optional<table::Schema> TableShuffler::schema() const {
    MutexLock lock(mutex_);
    return schema_;
}

}  // namespace spillway::python
