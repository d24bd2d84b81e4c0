#include <spillway/table/packed_gather.hpp>

#include <cstring>

#include <spillway/core/error.hpp>

#include "bitmap.hpp"
#include "packed_layout.hpp"
#include "partition_scatter.hpp"
#include "small_copy.hpp"
#include "value_width.hpp"

namespace spillway::table {
namespace {

/// Copies each `Word`-sized value of `source` at `rows` to `out`, in order;
/// returns the end of what it wrote.
template <typename Word>
std::byte* gather_values(std::byte const* source, std::span<std::uint32_t const> rows, std::byte* out) {
    for (auto const row : rows) {
        std::memcpy(out, source + std::size_t{row} * sizeof(Word), sizeof(Word));
        out += sizeof(Word);
    }
    return out;
}

}  // namespace

PackedGather::PackedGather(std::span<Table const> tables,
                           std::span<std::span<std::uint32_t const> const> partition_of_row, std::uint32_t partitions)
    : tables_(tables) {
    SPILLWAY_EXPECTS(partition_of_row.size() == tables.size(),
                     partition_of_row.size() << " lists of partition ids for " << tables.size() << " tables",
                     InvalidArgument);
    SPILLWAY_EXPECTS(partitions > 0, "splitting into 0 partitions; give at least 1", InvalidArgument);
    auto const column_count = tables.empty() ? std::size_t{0} : tables.front().num_columns();
    rows_.assign(partitions, 0);
    characters_.resize(column_count);
    has_nulls_.resize(column_count);
    grouped_.reserve(tables.size());
    for (std::size_t index = 0; index < tables.size(); ++index) {
        auto const& table = tables[index];
        SPILLWAY_EXPECTS(table.schema() == tables.front().schema(),
                         "cannot gather a table of (" << table.schema().to_string() << ") with one of ("
                                                      << tables.front().schema().to_string() << ")",
                         InvalidArgument);
        auto const counts = detail::count_partitions(table, partition_of_row[index], partitions);
        for (std::size_t column = 0; column < column_count; ++column) {
            if (!counts.characters[column].empty()) {
                characters_[column].resize(partitions, 0);
                for (std::uint32_t partition = 0; partition < partitions; ++partition) {
                    characters_[column][partition] += counts.characters[column][partition];
                }
            }
            if (!counts.has_nulls[column].empty()) {
                has_nulls_[column].resize(partitions, 0);
                for (std::uint32_t partition = 0; partition < partitions; ++partition) {
                    has_nulls_[column][partition] |= counts.has_nulls[column][partition];
                }
            }
        }
        // A stable counting sort of the rows by partition.
        GroupedRows grouped;
        grouped.starts.resize(std::size_t{partitions} + 1, 0);
        for (std::uint32_t partition = 0; partition < partitions; ++partition) {
            grouped.starts[partition + 1] = grouped.starts[partition] + counts.rows[partition];
            rows_[partition] += counts.rows[partition];
        }
        grouped.rows.resize(table.num_rows());
        std::vector<std::uint32_t> next(grouped.starts.begin(), grouped.starts.end() - 1);
        auto const ids = partition_of_row[index];
        for (std::size_t row = 0; row < ids.size(); ++row) {
            grouped.rows[next[ids[row]]++] = static_cast<std::uint32_t>(row);
        }
        grouped_.push_back(std::move(grouped));
    }
    sizes_.assign(partitions, 0);
    for (std::uint32_t partition = 0; partition < partitions; ++partition) {
        SPILLWAY_EXPECTS(rows_[partition] <= Column::max_rows,
                         "partition " << partition << " would hold " << rows_[partition] << " rows, more than the "
                                      << Column::max_rows << " a column can; use more partitions",
                         InvalidArgument);
    }
    for (std::size_t column = 0; column < column_count; ++column) {
        auto const type = tables.front().column(column).type();
        for (std::uint32_t partition = 0; partition < partitions; ++partition) {
            auto const has_nulls = !has_nulls_[column].empty() && has_nulls_[column][partition] != 0;
            auto const characters = characters_[column].empty() ? 0 : characters_[column][partition];
            SPILLWAY_EXPECTS(characters <= Column::max_characters,
                             "partition " << partition << " would hold " << characters
                                          << " bytes of characters, more than the " << Column::max_characters
                                          << " a string column can; use more partitions",
                             InvalidArgument);
            sizes_[partition] += detail::buffer_sizes(type, rows_[partition], has_nulls, characters).padded_total();
        }
    }
}

std::vector<std::byte> PackedGather::pack_into(std::uint32_t partition, std::span<std::byte> payload) const {
    SPILLWAY_EXPECTS(partition < partitions(),
                     "partition " << partition << " is out of range for " << partitions() << " partitions",
                     InvalidArgument);
    auto const size = sizes_[partition];
    SPILLWAY_EXPECTS(payload.size() >= size, "packing a piece of " << size << " bytes into a buffer of " << payload.size(),
                     InvalidArgument);
    if (tables_.empty()) {
        return detail::packed_metadata({}, 0, {}, payload.first(0));
    }
    auto const fields = std::span<Field const>(tables_.front().schema().fields());
    detail::check_packable_names(fields);
    auto const rows = rows_[partition];
    // Each table's rows of the partition.
    std::vector<std::span<std::uint32_t const>> table_rows;
    table_rows.reserve(tables_.size());
    for (auto const& grouped : grouped_) {
        table_rows.push_back(
            std::span(grouped.rows).subspan(grouped.starts[partition], grouped.starts[partition + 1] - grouped.starts[partition]));
    }

    std::size_t position = 0;
    std::vector<detail::PackedColumn> columns;
    columns.reserve(fields.size());
    for (std::size_t column = 0; column < fields.size(); ++column) {
        auto const type = fields[column].type;
        auto const has_nulls = !has_nulls_[column].empty() && has_nulls_[column][partition] != 0;
        auto const characters = characters_[column].empty() ? 0 : characters_[column][partition];
        auto const sizes = detail::buffer_sizes(type, rows, has_nulls, characters);
        columns.push_back({has_nulls, characters});
        auto const [validity, data, text] = detail::place_packed_column(payload.data(), position, sizes);
        if (has_nulls) {
            std::memset(validity, 0, sizes.validity);
            std::size_t at = 0;
            for (std::size_t table = 0; table < tables_.size(); ++table) {
                auto const& source = tables_[table].column(column);
                auto const* bits = source.null_count() == 0 ? nullptr : source.validity_buffer().data();
                for (auto const row : table_rows[table]) {
                    detail::set_bit(validity, at++, bits == nullptr || detail::get_bit(bits, row));
                }
            }
        }
        if (type == DataType::string) {
            std::int32_t end = 0;
            auto* ends = data;
            std::memcpy(ends, &end, sizeof(end));
            ends += sizeof(end);
            auto* out = text;
            for (std::size_t table = 0; table < tables_.size(); ++table) {
                auto const& source = tables_[table].column(column);
                auto const offsets = source.offsets();
                auto const* characters_in = source.character_buffer().data();
                for (auto const row : table_rows[table]) {
                    auto const length = static_cast<std::size_t>(offsets[row + 1] - offsets[row]);
                    detail::copy_small(out, characters_in + offsets[row], length);
                    out += length;
                    end += static_cast<std::int32_t>(length);
                    std::memcpy(ends, &end, sizeof(end));
                    ends += sizeof(end);
                }
            }
        } else {
            auto* out = data;
            for (std::size_t table = 0; table < tables_.size(); ++table) {
                auto const* values = tables_[table].column(column).data_buffer().data();
                out = detail::visit_value_width(
                    type, [&]<typename Word>(Word) { return gather_values<Word>(values, table_rows[table], out); }
                );
            }
        }
    }
    return detail::packed_metadata(fields, rows, columns, payload.first(size));
}

}  // namespace spillway::table
