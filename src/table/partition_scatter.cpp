#include "partition_scatter.hpp"

#include <cstring>

#include <spillway/core/error.hpp>

#include "bitmap.hpp"
#include "small_copy.hpp"

namespace spillway::table::detail {
namespace {

/// Copies each `Word`-sized value of `source` to the end of its row's piece.
template <typename Word>
void scatter_values(std::byte const* source, std::span<std::uint32_t const> partition_of_row,
                    std::span<PieceBuffers const> pieces) {
    std::vector<std::byte*> cursors(pieces.size());
    for (std::size_t partition = 0; partition < pieces.size(); ++partition) {
        cursors[partition] = pieces[partition].data;
    }
    for (std::size_t row = 0; row < partition_of_row.size(); ++row) {
        auto& cursor = cursors[partition_of_row[row]];
        std::memcpy(cursor, source + row * sizeof(Word), sizeof(Word));
        cursor += sizeof(Word);
    }
}

void scatter_validity(Column const& column, std::span<std::uint32_t const> partition_of_row,
                      std::span<std::uint32_t const> rows, std::span<PieceBuffers const> pieces) {
    if (column.null_count() == 0) {
        return;
    }
    for (std::size_t partition = 0; partition < pieces.size(); ++partition) {
        if (pieces[partition].validity != nullptr) {
            std::memset(pieces[partition].validity, 0, bitmap_bytes(rows[partition]));
        }
    }
    std::vector<std::size_t> next_row(pieces.size(), 0);
    auto const* bits = column.validity_buffer().data();
    for (std::size_t row = 0; row < partition_of_row.size(); ++row) {
        auto const partition = partition_of_row[row];
        auto const at = next_row[partition]++;
        if (auto* out = pieces[partition].validity; out != nullptr && get_bit(bits, row)) {
            set_bit(out, at, true);
        }
    }
}

void scatter_strings(Column const& column, std::span<std::uint32_t const> partition_of_row,
                     std::span<PieceBuffers const> pieces) {
    std::vector<std::byte*> text(pieces.size());
    std::vector<std::byte*> ends(pieces.size());
    for (std::size_t partition = 0; partition < pieces.size(); ++partition) {
        text[partition] = pieces[partition].characters;
        ends[partition] = pieces[partition].data;
        if (ends[partition] != nullptr) {
            std::memset(ends[partition], 0, sizeof(std::int32_t));
            ends[partition] += sizeof(std::int32_t);
        }
    }
    auto const offsets = column.offsets();
    auto const* source = column.character_buffer().data();
    for (std::size_t row = 0; row < partition_of_row.size(); ++row) {
        auto const partition = partition_of_row[row];
        auto const length = static_cast<std::size_t>(offsets[row + 1] - offsets[row]);
        copy_small(text[partition], source + offsets[row], length);
        text[partition] += length;
        auto const end = static_cast<std::int32_t>(text[partition] - pieces[partition].characters);
        std::memcpy(ends[partition], &end, sizeof(end));
        ends[partition] += sizeof(end);
    }
}

}  // namespace

PartitionCounts count_partitions(Table const& table, std::span<std::uint32_t const> partition_of_row,
                                 std::uint32_t partitions) {
    SPILLWAY_EXPECTS(partition_of_row.size() == table.num_rows(),
                     partition_of_row.size() << " partition ids for a table of " << table.num_rows() << " rows",
                     InvalidArgument);
    SPILLWAY_EXPECTS(partitions > 0, "splitting into 0 partitions; give at least 1", InvalidArgument);
    PartitionCounts counts;
    counts.rows.assign(partitions, 0);
    for (auto const partition : partition_of_row) {
        SPILLWAY_EXPECTS(partition < partitions,
                         "partition id " << partition << " is out of range for " << partitions << " partitions",
                         InvalidArgument);
        ++counts.rows[partition];
    }
    counts.characters.resize(table.num_columns());
    counts.has_nulls.resize(table.num_columns());
    for (std::size_t index = 0; index < table.num_columns(); ++index) {
        auto const& column = table.column(index);
        if (column.type() == DataType::string) {
            auto& characters = counts.characters[index];
            characters.assign(partitions, 0);
            auto const offsets = column.offsets();
            for (std::size_t row = 0; row < partition_of_row.size(); ++row) {
                characters[partition_of_row[row]] += static_cast<std::size_t>(offsets[row + 1] - offsets[row]);
            }
            for (auto const count : characters) {
                SPILLWAY_EXPECTS(count <= Column::max_characters,
                                 "a partition would hold " << count << " bytes of characters, more than the "
                                                           << Column::max_characters
                                                           << " a string column can; use more partitions",
                                 InvalidArgument);
            }
        }
        if (column.null_count() != 0) {
            auto& has_nulls = counts.has_nulls[index];
            has_nulls.assign(partitions, 0);
            auto const* bits = column.validity_buffer().data();
            for (std::size_t row = 0; row < partition_of_row.size(); ++row) {
                if (!get_bit(bits, row)) {
                    has_nulls[partition_of_row[row]] = 1;
                }
            }
        }
    }
    return counts;
}

PieceBuffers place_packed_column(std::byte* payload, std::size_t& position, BufferSizes sizes) noexcept {
    auto const place = [&](std::size_t size) {
        auto* const at = payload + position;
        std::memset(at + size, 0, padded(size) - size);
        position += padded(size);
        return at;
    };
    auto* const validity = place(sizes.validity);
    auto* const data = place(sizes.data);
    auto* const characters = place(sizes.characters);
    return {sizes.validity == 0 ? nullptr : validity, data, characters};
}

void scatter_column(Column const& column, std::span<std::uint32_t const> partition_of_row,
                    std::span<std::uint32_t const> rows, std::span<PieceBuffers const> pieces) {
    scatter_validity(column, partition_of_row, rows, pieces);
    if (column.type() == DataType::string) {
        scatter_strings(column, partition_of_row, pieces);
    } else if (data_width(column.type()) == sizeof(std::uint32_t)) {
        scatter_values<std::uint32_t>(column.data_buffer().data(), partition_of_row, pieces);
    } else {
        scatter_values<std::uint64_t>(column.data_buffer().data(), partition_of_row, pieces);
    }
}

}  // namespace spillway::table::detail
