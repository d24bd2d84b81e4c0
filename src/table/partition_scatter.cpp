#include "partition_scatter.hpp"

#include <cstring>

#include <spillway/core/error.hpp>

#include "bitmap.hpp"
#include "small_copy.hpp"
#include "value_width.hpp"

namespace spillway::table::detail {
namespace {

/// Copies each `Word`-sized value of `source` to its place in its row's
/// piece. Each row's place is known beforehand, so no row waits for the
/// one before it to move its piece's end (rows of one key come in runs).
template <typename Word>
void scatter_values(std::byte const* source, std::span<std::uint32_t const> partition_of_row,
                    std::span<std::uint32_t const> row_in_piece, std::span<PieceBuffers const> pieces) {
    std::vector<std::byte*> starts(pieces.size());
    for (std::size_t partition = 0; partition < pieces.size(); ++partition) {
        starts[partition] = pieces[partition].data;
    }
    for (std::size_t row = 0; row < partition_of_row.size(); ++row) {
        std::memcpy(starts[partition_of_row[row]] + std::size_t{row_in_piece[row]} * sizeof(Word),
                    source + row * sizeof(Word), sizeof(Word));
    }
}

void scatter_validity(Column const& column, std::span<std::uint32_t const> partition_of_row,
                      std::span<std::uint32_t const> rows, std::span<std::uint32_t const> row_in_piece,
                      std::span<PieceBuffers const> pieces) {
    if (column.null_count() == 0) {
        return;
    }
    for (std::size_t partition = 0; partition < pieces.size(); ++partition) {
        if (pieces[partition].validity != nullptr) {
            std::memset(pieces[partition].validity, 0, bitmap_bytes(rows[partition]));
        }
    }
    auto const* bits = column.validity_buffer().data();
    for (std::size_t row = 0; row < partition_of_row.size(); ++row) {
        if (auto* out = pieces[partition_of_row[row]].validity; out != nullptr && get_bit(bits, row)) {
            set_bit(out, row_in_piece[row], true);
        }
    }
}

void scatter_strings(Column const& column, std::span<std::uint32_t const> partition_of_row,
                     std::span<std::uint32_t const> row_in_piece, std::span<PieceBuffers const> pieces) {
    std::vector<std::byte*> text(pieces.size());
    for (std::size_t partition = 0; partition < pieces.size(); ++partition) {
        text[partition] = pieces[partition].characters;
        if (pieces[partition].data != nullptr) {
            std::memset(pieces[partition].data, 0, sizeof(std::int32_t));
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
        std::memcpy(pieces[partition].data + (std::size_t{row_in_piece[row]} + 1) * sizeof(end), &end, sizeof(end));
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
    counts.row_in_piece.resize(partition_of_row.size());
    for (std::size_t row = 0; row < partition_of_row.size(); ++row) {
        auto const partition = partition_of_row[row];
        SPILLWAY_EXPECTS(partition < partitions,
                         "partition id " << partition << " is out of range for " << partitions << " partitions",
                         InvalidArgument);
        counts.row_in_piece[row] = counts.rows[partition]++;
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
                    std::span<std::uint32_t const> rows, std::span<std::uint32_t const> row_in_piece,
                    std::span<PieceBuffers const> pieces) {
    scatter_validity(column, partition_of_row, rows, row_in_piece, pieces);
    if (column.type() == DataType::string) {
        scatter_strings(column, partition_of_row, row_in_piece, pieces);
    } else {
        visit_value_width(column.type(), [&]<typename Word>(Word) {
            scatter_values<Word>(column.data_buffer().data(), partition_of_row, row_in_piece, pieces);
        });
    }
}

}  // namespace spillway::table::detail
