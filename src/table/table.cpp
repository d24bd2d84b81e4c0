#include <spillway/table/table.hpp>

#include <utility>

#include <algorithm>
#include <cstring>
#include <numeric>

#include <spillway/core/error.hpp>

#include "bitmap.hpp"
#include "column_access.hpp"
#include "column_concatenation.hpp"

namespace spillway::table {

Table::Table(Schema schema, std::vector<Column> columns) : schema_(std::move(schema)), columns_(std::move(columns)) {
    SPILLWAY_EXPECTS(columns_.size() == schema_.size(),
                     columns_.size() << " columns for a schema of " << schema_.size() << " fields", InvalidArgument);
    num_rows_ = columns_.empty() ? 0 : columns_.front().size();
    for (std::size_t index = 0; index < columns_.size(); ++index) {
        auto const& field = schema_.field(index);
        SPILLWAY_EXPECTS(columns_[index].type() == field.type,
                         "column '" << field.name << "' is " << to_string(field.type) << " in the schema but the column is "
                                    << to_string(columns_[index].type()),
                         InvalidArgument);
        SPILLWAY_EXPECTS(columns_[index].size() == num_rows_,
                         "column '" << field.name << "' has " << columns_[index].size() << " rows but column '"
                                    << schema_.field(0).name << "' has " << num_rows_,
                         InvalidArgument);
    }
}

Column const& Table::column(std::size_t index) const {
    SPILLWAY_EXPECTS(index < columns_.size(),
                     "column " << index << " of a table of " << columns_.size() << " columns", InvalidArgument);
    return columns_[index];
}

Column const& Table::column(std::string_view name) const { return columns_[schema_.index_of(name)]; }

std::size_t Table::byte_size() const noexcept {
    return std::accumulate(columns_.begin(), columns_.end(), std::size_t{0},
                           [](std::size_t total, Column const& column) { return total + column.byte_size(); });
}

std::vector<Column> Table::release_columns() && noexcept {
    schema_ = Schema();
    num_rows_ = 0;
    return std::exchange(columns_, {});
}

Table Table::slice(std::size_t begin, std::size_t count) const {
    SPILLWAY_EXPECTS(begin <= num_rows_ && count <= num_rows_ - begin,
                     "slice of rows [" << begin << ", " << begin + count << ") of a table of " << num_rows_ << " rows",
                     InvalidArgument);
    std::vector<Column> columns;
    columns.reserve(columns_.size());
    for (auto const& column : columns_) {
        columns.push_back(column.slice(begin, count));
    }
    return Table(schema_, std::move(columns));
}

Table Table::take(std::span<std::uint32_t const> rows) const {
    SPILLWAY_EXPECTS(!columns_.empty() || rows.empty(), "taking rows of a table without columns", InvalidArgument);
    std::vector<Column> columns;
    columns.reserve(columns_.size());
    for (auto const& column : columns_) {
        columns.push_back(column.take(rows));
    }
    return Table(schema_, std::move(columns));
}

Table Table::select(std::span<std::size_t const> indices) const {
    std::vector<Field> fields;
    std::vector<Column> columns;
    for (auto const index : indices) {
        SPILLWAY_EXPECTS(std::ranges::count(indices, index) == 1, "column " << index << " is selected twice",
                         InvalidArgument);
        columns.push_back(column(index));
        fields.push_back(schema_.field(index));
    }
    return Table(Schema(std::move(fields)), std::move(columns));
}

detail::ConcatenationSize detail::concatenation_size(std::span<ColumnParts const> parts) {
    ConcatenationSize size;
    for (auto const& part : parts) {
        size.rows += part.rows;
        size.characters += part.characters.size();
        size.has_validity = size.has_validity || !part.validity.empty();
    }
    SPILLWAY_EXPECTS(size.rows <= Column::max_rows,
                     "concatenating " << size.rows << " rows; a column holds at most " << Column::max_rows,
                     InvalidArgument);
    SPILLWAY_EXPECTS(size.characters <= Column::max_characters,
                     "concatenating " << size.characters << " bytes of characters; a string column holds at most "
                                      << Column::max_characters,
                     InvalidArgument);
    return size;
}

void detail::write_concatenation(DataType type, std::span<ColumnParts const> parts, ConcatenationSize size,
                                 std::span<std::byte> validity, std::span<std::byte> data,
                                 std::span<std::byte> characters) noexcept {
    if (!validity.empty()) {
        std::fill_n(validity.begin(), bitmap_bytes(size.rows), std::byte{0xff});
    }
    std::size_t row = 0;
    std::size_t character = 0;
    std::size_t data_end = 0;
    if (type == DataType::string) {
        std::memset(data.data(), 0, sizeof(std::int32_t));
    }
    for (auto const& part : parts) {
        if (!validity.empty() && !part.validity.empty()) {
            copy_bits(part.validity.data(), 0, validity.data(), row, part.rows);
        }
        if (type == DataType::string) {
            auto* out = data.data() + row * sizeof(std::int32_t);
            for (std::size_t at = 1; at <= part.rows; ++at) {
                std::int32_t offset;
                std::memcpy(&offset, part.data.data() + at * sizeof(offset), sizeof(offset));
                offset += static_cast<std::int32_t>(character);
                std::memcpy(out + at * sizeof(offset), &offset, sizeof(offset));
            }
            std::ranges::copy(part.characters, characters.begin() + static_cast<std::ptrdiff_t>(character));
        } else {
            std::ranges::copy(part.data, data.begin() + static_cast<std::ptrdiff_t>(data_end));
            data_end += part.data.size();
        }
        row += part.rows;
        character += part.characters.size();
    }
    if (!validity.empty() && size.rows % 8 != 0) {
        validity[size.rows / 8] &= static_cast<std::byte>((1U << (size.rows % 8)) - 1);
    }
}

Column detail::concatenate_columns(DataType type, std::span<ColumnParts const> parts) {
    auto const size = concatenation_size(parts);
    ColumnBuffer validity(size.has_validity ? bitmap_bytes(size.rows) : 0);
    ColumnBuffer data(type == DataType::string ? (size.rows + 1) * sizeof(std::int32_t) : size.rows * data_width(type));
    ColumnBuffer characters(size.characters);
    write_concatenation(type, parts, size, validity, data, characters);
    return ColumnAccess::make(type, size.rows, std::move(validity), std::move(data), std::move(characters));
}

Table Table::concatenate(std::span<Table const> tables) {
    if (tables.empty()) {
        return Table();
    }
    auto const& schema = tables.front().schema();
    for (auto const& table : tables) {
        SPILLWAY_EXPECTS(table.schema() == schema,
                         "cannot concatenate a table of (" << table.schema().to_string() << ") to one of ("
                                                           << schema.to_string() << ")",
                         InvalidArgument);
    }
    std::vector<Column> columns;
    columns.reserve(schema.size());
    std::vector<detail::ColumnParts> parts(tables.size());
    for (std::size_t index = 0; index < schema.size(); ++index) {
        for (std::size_t at = 0; at < tables.size(); ++at) {
            auto const& column = tables[at].column(index);
            parts[at] = {column.size(), column.validity_buffer(), column.data_buffer(), column.character_buffer()};
        }
        columns.push_back(detail::concatenate_columns(schema.field(index).type, parts));
    }
    return Table(schema, std::move(columns));
}

}  // namespace spillway::table
