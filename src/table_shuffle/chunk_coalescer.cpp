#include <spillway/table_shuffle/chunk_coalescer.hpp>

#include <span>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/table/packed_gather.hpp>

namespace spillway::table_shuffle {

ChunkCoalescer::ChunkCoalescer(memory::BufferResource& resource, shuffle::PartitionId partitions,
                               std::size_t budget_bytes)
    : resource_(resource), partitions_(partitions), budget_bytes_(budget_bytes), bookkeeping_(resource) {
    SPILLWAY_EXPECTS(partitions > 0, "ChunkCoalescer: 0 partitions; give at least 1", InvalidArgument);
}

ChunkCoalescer::Chunks ChunkCoalescer::add(table::Table table, std::vector<std::uint32_t> partition_of_row) {
    SPILLWAY_EXPECTS(partition_of_row.size() == table.num_rows(),
                     "ChunkCoalescer: " << partition_of_row.size() << " partition ids for a table of "
                                        << table.num_rows() << " rows",
                     InvalidArgument);
    for (auto const partition : partition_of_row) {
        SPILLWAY_EXPECTS(partition < partitions_,
                         "ChunkCoalescer: partition id " << partition << " is out of range for " << partitions_
                                                         << " partitions",
                         InvalidArgument);
    }
    SPILLWAY_EXPECTS(tables_.empty() || table.schema() == tables_.front().schema(),
                     "ChunkCoalescer: a table of (" << table.schema().to_string() << ") after tables of ("
                                                    << tables_.front().schema().to_string() << ")",
                     InvalidArgument);
    // Room in both vectors first (they grow together), so that holding the
    // table cannot fail halfway.
    if (tables_.size() == tables_.capacity() || partition_of_row_.size() == partition_of_row_.capacity()) {
        auto const capacity = 2 * tables_.size() + 1;
        tables_.reserve(capacity);
        partition_of_row_.reserve(capacity);
    }
    held_bytes_ += table.byte_size();
    tables_.push_back(std::move(table));
    partition_of_row_.push_back(std::move(partition_of_row));
    count_bookkeeping();
    if (budget_bytes_ > 0 && held_bytes_ <= budget_bytes_) {
        return {};
    }
    return pack_held();
}

ChunkCoalescer::Chunks ChunkCoalescer::flush() { return pack_held(); }

void ChunkCoalescer::discard() noexcept {
    // New vectors: assigning `{}` would keep the capacity, and its count.
    tables_ = std::vector<table::Table>();
    partition_of_row_ = std::vector<std::vector<std::uint32_t>>();
    held_bytes_ = 0;
    count_bookkeeping();
}

ChunkCoalescer::Chunks ChunkCoalescer::pack_held() {
    if (tables_.empty()) {
        return {};
    }
    std::vector<std::span<std::uint32_t const>> partition_of_row(partition_of_row_.begin(), partition_of_row_.end());
    table::PackedGather const gather(tables_, partition_of_row, partitions_);
    std::size_t total = 0;
    std::size_t with_rows = 0;
    for (shuffle::PartitionId partition = 0; partition < partitions_; ++partition) {
        if (gather.rows(partition) != 0) {
            total += gather.packed_size(partition);
            ++with_rows;
        }
    }
    // The tables stay held until every chunk is packed, so that a failure
    // loses nothing.
    auto reservation = resource_.reserve_or_wait(total);
    Chunks chunks;
    chunks.reserve(with_rows);
    for (shuffle::PartitionId partition = 0; partition < partitions_; ++partition) {
        if (gather.rows(partition) != 0) {
            auto payload = resource_.make_buffer(gather.packed_size(partition), reservation);
            auto metadata = gather.pack_into(partition, payload.data());
            chunks.emplace(partition, shuffle::PackedData{std::move(metadata), std::move(payload)});
        }
    }
    // New vectors: assigning `{}` would keep the capacity, and its count.
    tables_ = std::vector<table::Table>();
    partition_of_row_ = std::vector<std::vector<std::uint32_t>>();
    held_bytes_ = 0;
    count_bookkeeping();
    return chunks;
}

void ChunkCoalescer::count_bookkeeping() noexcept {
    std::size_t bytes = tables_.capacity() * sizeof(table::Table)
                        + partition_of_row_.capacity() * sizeof(std::vector<std::uint32_t>);
    for (auto const& ids : partition_of_row_) {
        bytes += ids.capacity() * sizeof(std::uint32_t);
    }
    bookkeeping_.cover(bytes);
}

}  // namespace spillway::table_shuffle
