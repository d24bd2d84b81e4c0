#include <spillway/table/packed_split.hpp>


#include <spillway/core/error.hpp>

#include "packed_layout.hpp"
#include "partition_scatter.hpp"

namespace spillway::table {

PackedSplit::PackedSplit(Table const& table, std::span<std::uint32_t const> partition_of_row,
                         std::uint32_t partitions)
    : table_(table), partition_of_row_(partition_of_row) {
    auto counts = detail::count_partitions(table, partition_of_row, partitions);
    rows_ = std::move(counts.rows);
    row_in_piece_ = std::move(counts.row_in_piece);
    characters_ = std::move(counts.characters);
    has_nulls_ = std::move(counts.has_nulls);
    sizes_.assign(partitions, 0);
    for (std::size_t index = 0; index < table.num_columns(); ++index) {
        auto const type = table.column(index).type();
        for (std::uint32_t partition = 0; partition < partitions; ++partition) {
            auto const has_nulls = !has_nulls_[index].empty() && has_nulls_[index][partition] != 0;
            auto const characters = characters_[index].empty() ? 0 : characters_[index][partition];
            sizes_[partition] += detail::buffer_sizes(type, rows_[partition], has_nulls, characters).padded_total();
        }
    }
}

std::vector<std::vector<std::byte>> PackedSplit::pack_into(std::span<std::span<std::byte> const> payloads) const {
    auto const partitions = this->partitions();
    SPILLWAY_EXPECTS(payloads.size() == partitions,
                     payloads.size() << " payloads for a split into " << partitions << " partitions", InvalidArgument);
    for (std::uint32_t partition = 0; partition < partitions; ++partition) {
        auto const size = payloads[partition].size();
        SPILLWAY_EXPECTS(size >= sizes_[partition] || (size == 0 && rows_[partition] == 0),
                         "packing a piece of " << sizes_[partition] << " bytes into a buffer of " << size,
                         InvalidArgument);
    }
    detail::check_packable_names(table_.schema().fields());
    auto const packs = [&](std::uint32_t partition) { return !payloads[partition].empty(); };

    // Lay every column out in each piece, zero the padding, then scatter the
    // column's rows into place: one sequential pass over each column.
    std::vector<std::size_t> position(partitions, 0);
    std::vector<detail::PieceBuffers> pieces(partitions);
    auto const column_count = table_.num_columns();
    std::vector<detail::PackedColumn> columns(std::size_t{partitions} * column_count);  // by partition, then column
    for (std::size_t index = 0; index < column_count; ++index) {
        auto const& column = table_.column(index);
        for (std::uint32_t partition = 0; partition < partitions; ++partition) {
            if (!packs(partition)) {
                pieces[partition] = {};
                continue;
            }
            auto const has_nulls = !has_nulls_[index].empty() && has_nulls_[index][partition] != 0;
            auto const characters = characters_[index].empty() ? 0 : characters_[index][partition];
            auto const sizes = detail::buffer_sizes(column.type(), rows_[partition], has_nulls, characters);
            pieces[partition] = detail::place_packed_column(payloads[partition].data(), position[partition], sizes);
            columns[partition * column_count + index] = {has_nulls, characters};
        }
        detail::scatter_column(column, partition_of_row_, rows_, row_in_piece_, pieces);
    }

    std::vector<std::vector<std::byte>> metadata(partitions);
    for (std::uint32_t partition = 0; partition < partitions; ++partition) {
        if (packs(partition)) {
            metadata[partition] = detail::packed_metadata(
                table_.schema().fields(), rows_[partition],
                std::span(columns).subspan(std::size_t{partition} * column_count, column_count),
                payloads[partition].first(sizes_[partition]));
        }
    }
    return metadata;
}

}  // namespace spillway::table
