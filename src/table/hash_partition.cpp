#include <spillway/table/hash_partition.hpp>

#include <spillway/core/error.hpp>
#include <spillway/table/row_hash.hpp>

#include "bitmap.hpp"
#include "column_access.hpp"
#include "small_copy.hpp"

namespace spillway::table {
namespace {

/// One output buffer per partition and where the next row goes in each.
struct Outputs {
    std::vector<ColumnBuffer> buffers;
    std::vector<std::byte*> cursors;

    /// Buffers of `bytes_of(partition)` bytes each.
    template <typename BytesOf>
    Outputs(std::size_t partitions, BytesOf bytes_of) : buffers(partitions), cursors(partitions) {
        for (std::size_t partition = 0; partition < partitions; ++partition) {
            buffers[partition].resize(bytes_of(partition));
            cursors[partition] = buffers[partition].data();
        }
    }
};

/// Copies each `Word`-sized value of `source` to the end of its row's partition.
template <typename Word>
void scatter_values(std::byte const* source, std::span<std::uint32_t const> partition_of_row, Outputs& outputs) {
    for (std::size_t row = 0; row < partition_of_row.size(); ++row) {
        auto& cursor = outputs.cursors[partition_of_row[row]];
        std::memcpy(cursor, source + row * sizeof(Word), sizeof(Word));
        cursor += sizeof(Word);
    }
}

/// The validity bitmaps of each partition's rows, or empty buffers if the
/// column has no nulls.
std::vector<ColumnBuffer> scatter_validity(Column const& column, std::span<std::uint32_t const> partition_of_row,
                                           std::span<std::uint32_t const> counts) {
    std::vector<ColumnBuffer> bitmaps(counts.size());
    if (column.null_count() == 0) {
        return bitmaps;
    }
    std::vector<std::size_t> next_row(counts.size(), 0);
    for (std::size_t partition = 0; partition < counts.size(); ++partition) {
        bitmaps[partition].assign(detail::bitmap_bytes(counts[partition]), std::byte{0});
    }
    auto const* bits = column.validity_buffer().data();
    for (std::size_t row = 0; row < partition_of_row.size(); ++row) {
        auto const partition = partition_of_row[row];
        detail::set_bit(bitmaps[partition].data(), next_row[partition]++, detail::get_bit(bits, row));
    }
    return bitmaps;
}

/// The rows of `column` split into one column per partition, keeping their order.
std::vector<Column> scatter_column(Column const& column, std::span<std::uint32_t const> partition_of_row,
                                   std::span<std::uint32_t const> counts) {
    auto const partitions = counts.size();
    auto bitmaps = scatter_validity(column, partition_of_row, counts);
    std::vector<Column> result;
    result.reserve(partitions);
    if (column.type() != DataType::string) {
        auto const width = data_width(column.type());
        Outputs values(partitions, [&](std::size_t partition) { return counts[partition] * width; });
        if (width == sizeof(std::uint32_t)) {
            scatter_values<std::uint32_t>(column.data_buffer().data(), partition_of_row, values);
        } else {
            scatter_values<std::uint64_t>(column.data_buffer().data(), partition_of_row, values);
        }
        for (std::size_t partition = 0; partition < partitions; ++partition) {
            result.push_back(detail::ColumnAccess::make(column.type(), counts[partition], std::move(bitmaps[partition]),
                                                        std::move(values.buffers[partition]), {}));
        }
        return result;
    }
    auto const offsets = column.offsets();
    std::vector<std::size_t> characters(partitions, 0);
    for (std::size_t row = 0; row < partition_of_row.size(); ++row) {
        characters[partition_of_row[row]] += static_cast<std::size_t>(offsets[row + 1] - offsets[row]);
    }
    for (auto const count : characters) {
        SPILLWAY_EXPECTS(count <= Column::max_characters,
                         "a partition would hold " << count << " bytes of characters, more than the "
                                                   << Column::max_characters << " a string column can; use more partitions",
                         InvalidArgument);
    }
    Outputs text(partitions, [&](std::size_t partition) { return characters[partition]; });
    Outputs ends(partitions, [&](std::size_t partition) { return (counts[partition] + 1) * sizeof(std::int32_t); });
    for (auto& cursor : ends.cursors) {
        std::memset(cursor, 0, sizeof(std::int32_t));
        cursor += sizeof(std::int32_t);
    }
    auto const* source = column.character_buffer().data();
    for (std::size_t row = 0; row < partition_of_row.size(); ++row) {
        auto const partition = partition_of_row[row];
        auto const length = static_cast<std::size_t>(offsets[row + 1] - offsets[row]);
        detail::copy_small(text.cursors[partition], source + offsets[row], length);
        text.cursors[partition] += length;
        auto const end = static_cast<std::int32_t>(text.cursors[partition] - text.buffers[partition].data());
        std::memcpy(ends.cursors[partition], &end, sizeof(end));
        ends.cursors[partition] += sizeof(end);
    }
    for (std::size_t partition = 0; partition < partitions; ++partition) {
        result.push_back(detail::ColumnAccess::make(DataType::string, counts[partition], std::move(bitmaps[partition]),
                                                    std::move(ends.buffers[partition]), std::move(text.buffers[partition])));
    }
    return result;
}

}  // namespace

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
    SPILLWAY_EXPECTS(partitions > 0, "splitting into 0 partitions; give at least 1", InvalidArgument);
    std::vector<std::uint32_t> counts(partitions, 0);
    for (auto const partition : partition_of_row) {
        SPILLWAY_EXPECTS(partition < partitions,
                         "partition id " << partition << " is out of range for " << partitions << " partitions",
                         InvalidArgument);
        ++counts[partition];
    }
    // Column by column, one sequential pass scatters every row to the end of
    // its partition: reads stay sequential and each partition is written in order.
    std::vector<std::vector<Column>> columns(partitions);
    for (auto const& column : table.columns()) {
        auto parts = scatter_column(column, partition_of_row, counts);
        for (std::uint32_t partition = 0; partition < partitions; ++partition) {
            columns[partition].push_back(std::move(parts[partition]));
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
