#include "table_shuffler.hpp"

#include <spillway/core/error.hpp>
#include <spillway/table_shuffle/packed_partitions.hpp>

namespace spillway::python {
namespace {

std::vector<std::string> nonempty(std::vector<std::string> keys) {
    SPILLWAY_EXPECTS(!keys.empty(), "a shuffle needs at least one key column", InvalidArgument);
    return keys;
}

}  // namespace

TableShuffler::TableShuffler(comm::Communicator& communicator, shuffle::OpId op_id, std::vector<std::string> keys,
                             shuffle::PartitionId partitions, shuffle::ShuffleConfig const& config)
    : communicator_(communicator),
      keys_(nonempty(std::move(keys))),
      shuffler_(communicator, op_id, partitions, communicator.buffer_resource(), shuffle::PartitionOwner::round_robin,
                config) {}

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

void TableShuffler::insert(table::Table const& table) {
    auto const key_columns = expect_schema(table.schema());
    if (table.num_rows() == 0) {
        return;
    }
    shuffler_.insert(table_shuffle::hash_partition_and_pack(table, key_columns, shuffler_.total_partitions(),
                                                            communicator_.buffer_resource()));
}

void TableShuffler::insert_finished() { shuffler_.insert_finished(); }

std::optional<table::Table> TableShuffler::extract(shuffle::PartitionId partition) {
    SPILLWAY_EXPECTS(partition < shuffler_.total_partitions(),
                     "partition " << partition << " is out of range: the shuffle has " << shuffler_.total_partitions(),
                     InvalidArgument);
    shuffler_.wait(partition);
    auto const chunks = shuffler_.extract(partition);
    if (!chunks.empty()) {
        return table_shuffle::unpack(chunks);
    }
    if (auto const known = schema()) {
        return empty_table(*known);
    }
    return std::nullopt;
}

std::optional<table::Schema> TableShuffler::schema() const {
    MutexLock lock(mutex_);
    return schema_;
}

table::Table empty_table(table::Schema const& schema) {
    std::vector<table::Column> columns;
    for (std::size_t index = 0; index < schema.size(); ++index) {
        columns.emplace_back(schema.field(index).type);
    }
    return table::Table(schema, std::move(columns));
}

}  // namespace spillway::python
