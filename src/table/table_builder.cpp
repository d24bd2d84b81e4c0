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
    for (std::size_t index = 1; index < columns_.size(); ++index) {
        SPILLWAY_EXPECTS(columns_[index].size() == columns_[0].size(),
                         "column " << index << " ('" << schema_.field(index).name << "') has "
                                   << columns_[index].size() << " values but column 0 ('" << schema_.field(0).name
                                   << "') has " << columns_[0].size() << "; every column needs one per row",
                         InvalidArgument);
    }
    std::vector<Column> columns;
    columns.reserve(columns_.size());
    for (auto& builder : columns_) {
        columns.push_back(builder.finish());
    }
    return Table(schema_, std::move(columns));
}

}  // namespace spillway::table
