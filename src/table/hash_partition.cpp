#include <spillway/table/hash_partition.hpp>

#include <spillway/core/error.hpp>
#include <spillway/table/row_hash.hpp>

#include "column_access.hpp"
#include "packed_layout.hpp"
#include "partition_scatter.hpp"

namespace spillway::table {

std::vector<std::uint32_t> partition_rows(Table const& table, std::span<std::size_t const> key_columns,
                                          std::uint32_t partitions) {
    SPILLWAY_EXPECTS(!key_columns.empty(), "partitioning needs at least one key column", InvalidArgument);
    SPILLWAY_EXPECTS(partitions > 0, "partitioning into 0 partitions; give at least 1", InvalidArgument);
    auto const hashes = hash_rows_charged(table, key_columns, partition_hash_seed);
    std::vector<std::uint32_t> partition_of_row(hashes.size());
    for (std::size_t row = 0; row < hashes.size(); ++row) {
        partition_of_row[row] = partition_index(hashes[row], partitions);
    }
    return partition_of_row;
}

std::vector<Table> split_by_partition(Table const& table, std::span<std::uint32_t const> partition_of_row,
                                      std::uint32_t partitions) {
    auto const counts = detail::count_partitions(table, partition_of_row, partitions);
    // Column by column, one sequential pass scatters every row to the end of
    // its partition: reads stay sequential and each partition is written in order.
    std::vector<std::vector<Column>> columns(partitions);
    for (std::size_t index = 0; index < table.num_columns(); ++index) {
        auto const& column = table.column(index);
        std::vector<ColumnBuffer> validity(partitions);
        std::vector<ColumnBuffer> data(partitions);
        std::vector<ColumnBuffer> characters(partitions);
        std::vector<detail::PieceBuffers> pieces(partitions);
        for (std::uint32_t partition = 0; partition < partitions; ++partition) {
            auto const rows = counts.rows[partition];
            auto const has_nulls = !counts.has_nulls[index].empty() && counts.has_nulls[index][partition] != 0;
            auto const sizes = detail::buffer_sizes(
                column.type(), rows, has_nulls,
                counts.characters[index].empty() ? 0 : counts.characters[index][partition]);
            validity[partition].resize(sizes.validity);
            data[partition].resize(sizes.data);
            characters[partition].resize(sizes.characters);
            pieces[partition] = {has_nulls ? validity[partition].data() : nullptr, data[partition].data(),
                                 characters[partition].data()};
        }
        detail::scatter_column(column, partition_of_row, counts.rows, counts.row_in_piece, pieces);
        for (std::uint32_t partition = 0; partition < partitions; ++partition) {
            columns[partition].push_back(detail::ColumnAccess::make(
                column.type(), counts.rows[partition], std::move(validity[partition]), std::move(data[partition]),
                std::move(characters[partition])));
        }
    }
    std::vector<Table> result;
    result.reserve(partitions);
    for (auto& partition_columns : columns) {
        result.emplace_back(table.schema(), std::move(partition_columns));
    }
    return result;
}

std::vector<Table> hash_partition(Table const& table, std::span<std::size_t const> key_columns,
                                  std::uint32_t partitions) {
    return split_by_partition(table, partition_rows(table, key_columns, partitions), partitions);
}

}  // namespace spillway::table
