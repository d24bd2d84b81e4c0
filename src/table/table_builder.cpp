#include <spillway/table/table_builder.hpp>

#include <spillway/core/error.hpp>

namespace spillway::table {

TableBuilder::TableBuilder(Schema schema, std::size_t expected_rows) : schema_(std::move(schema)) {
    columns_.reserve(schema_.size());
    for (auto const& field : schema_.fields()) {
        columns_.emplace_back(field.type).reserve(expected_rows);
    }
}

ColumnBuilder& TableBuilder::column(std::size_t index) {
    SPILLWAY_EXPECTS(index < columns_.size(),
                     "column " << index << " of a table of " << columns_.size() << " columns", InvalidArgument);
    return columns_[index];
}

Table TableBuilder::finish() {
    std::vector<Column> columns;
    columns.reserve(columns_.size());
    for (auto& builder : columns_) {
        columns.push_back(builder.finish());
    }
    return Table(schema_, std::move(columns));
}

}  // namespace spillway::table
