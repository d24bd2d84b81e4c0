#include <spillway/table/hash_partition.hpp>

#include <spillway/core/error.hpp>
#include <spillway/table/row_hash.hpp>

namespace spillway::table {

std::vector<std::uint32_t> partition_rows(Table const& table, std::span<std::size_t const> key_columns,
                                          std::uint32_t partitions) {
    SPILLWAY_EXPECTS(!key_columns.empty(), "partitioning needs at least one key column", InvalidArgument);
    SPILLWAY_EXPECTS(partitions > 0, "partitioning into 0 partitions; give at least 1", InvalidArgument);
    auto const hashes = hash_rows(table, key_columns, partition_hash_seed);
    std::vector<std::uint32_t> partition_of_row(hashes.size());
    for (std::size_t row = 0; row < hashes.size(); ++row) {
        partition_of_row[row] = partition_index(hashes[row], partitions);
    }
    return partition_of_row;
}

std::vector<Table> split_by_partition(Table const& table, std::span<std::uint32_t const> partition_of_row,
                                      std::uint32_t partitions) {
    SPILLWAY_EXPECTS(partition_of_row.size() == table.num_rows(),
                     partition_of_row.size() << " partition ids for a table of " << table.num_rows() << " rows",
                     InvalidArgument);
    SPILLWAY_EXPECTS(table.num_rows() <= Column::max_rows,
                     "splitting a table of " << table.num_rows() << " rows; a table holds at most " << Column::max_rows,
                     InvalidArgument);
    // Counting sort of the row indices by partition, stable so each
    // partition keeps the rows' order.
    std::vector<std::uint32_t> starts(std::size_t{partitions} + 1, 0);
    for (auto const partition : partition_of_row) {
        SPILLWAY_EXPECTS(partition < partitions,
                         "partition id " << partition << " is out of range for " << partitions << " partitions",
                         InvalidArgument);
        ++starts[partition + 1];
    }
    for (std::uint32_t partition = 0; partition < partitions; ++partition) {
        starts[partition + 1] += starts[partition];
    }
    std::vector<std::uint32_t> rows_by_partition(partition_of_row.size());
    std::vector<std::uint32_t> cursors(starts.begin(), starts.end() - 1);
    for (std::uint32_t row = 0; row < partition_of_row.size(); ++row) {
        rows_by_partition[cursors[partition_of_row[row]]++] = row;
    }
    std::vector<Table> result;
    result.reserve(partitions);
    std::span<std::uint32_t const> const rows(rows_by_partition);
    for (std::uint32_t partition = 0; partition < partitions; ++partition) {
        result.push_back(table.take(rows.subspan(starts[partition], starts[partition + 1] - starts[partition])));
    }
    return result;
}

std::vector<Table> hash_partition(Table const& table, std::span<std::size_t const> key_columns,
                                  std::uint32_t partitions) {
    return split_by_partition(table, partition_rows(table, key_columns, partitions), partitions);
}

}  // namespace spillway::table
