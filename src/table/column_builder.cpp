#include <spillway/table/column_builder.hpp>

#include <cstring>

#include <spillway/core/error.hpp>

#include "bitmap.hpp"
#include "column_access.hpp"

namespace spillway::table {

ColumnBuilder::ColumnBuilder(DataType type) : type_(type), data_(Column::initial_data(type)) {}

void ColumnBuilder::reserve(std::size_t rows, std::size_t characters) {
    data_.reserve(data_.size() + rows * data_width(type_));
    if (type_ == DataType::string) {
        characters_.reserve(characters_.size() + characters);
    }
    if (!validity_.empty()) {
        validity_.reserve(detail::bitmap_bytes(size_ + rows));
    }
}

namespace {

[[noreturn]] void fail_too_many_characters(std::size_t characters) {
    SPILLWAY_FAIL("a string column would hold " << characters << " bytes of characters, more than the "
                      << Column::max_characters << " it can; build smaller chunks",
                  InvalidArgument);
}

}  // namespace

void ColumnBuilder::fail_wrong_type(char const* what) const {
    SPILLWAY_FAIL("cannot append " << what << " to a " << to_string(type_) << " column", InvalidArgument);
}

void ColumnBuilder::append(std::string_view value) {
    if (type_ != DataType::string) [[unlikely]] {
        fail_wrong_type("a string");
    }
    auto const end = characters_.size() + value.size();
    if (end > Column::max_characters) [[unlikely]] {
        fail_too_many_characters(end);
    }
    characters_.resize(end);
    if (!value.empty()) {  // memcpy of a null pointer is undefined, even of 0 bytes
        std::memcpy(characters_.data() + end - value.size(), value.data(), value.size());
    }
    auto const offset = static_cast<std::int32_t>(end);
    auto const data_end = data_.size();
    data_.resize(data_end + sizeof(offset));
    std::memcpy(data_.data() + data_end, &offset, sizeof(offset));
    mark_valid();
}

void ColumnBuilder::append_null() {
    if (null_count_ == 0) {
        validity_ = detail::all_valid_bitmap(size_);
    }
    set_validity_bit(false);
    auto const data_end = data_.size();
    data_.resize(data_end + data_width(type_));
    if (type_ == DataType::string) {
        // A null string is empty: its end offset repeats the previous one.
        std::memcpy(data_.data() + data_end, data_.data() + data_end - sizeof(std::int32_t), sizeof(std::int32_t));
    } else {
        std::memset(data_.data() + data_end, 0, data_width(type_));
    }
    ++null_count_;
    ++size_;
}

void ColumnBuilder::truncate(std::size_t rows) {
    SPILLWAY_ASSERT(rows <= size_, "truncating a column of " << size_ << " rows to " << rows);
    if (null_count_ != 0) {
        for (auto row = rows; row < size_; ++row) {
            null_count_ -= detail::get_bit(validity_.data(), row) ? 0 : 1;
        }
        validity_.resize(null_count_ == 0 ? 0 : detail::bitmap_bytes(rows));
    }
    if (type_ == DataType::string) {
        std::int32_t end = 0;
        std::memcpy(&end, data_.data() + rows * sizeof(end), sizeof(end));
        characters_.resize(static_cast<std::size_t>(end));
        data_.resize((rows + 1) * sizeof(end));
    } else {
        data_.resize(rows * data_width(type_));
    }
    size_ = rows;
}

void ColumnBuilder::set_validity_bit(bool valid) {
    if (validity_.size() < detail::bitmap_bytes(size_ + 1)) {
        validity_.push_back(std::byte{0});
    }
    detail::set_bit(validity_.data(), size_, valid);
}

Column ColumnBuilder::finish() {
    SPILLWAY_EXPECTS(size_ <= Column::max_rows,
                     "a column of " << size_ << " rows; a column holds at most " << Column::max_rows,
                     InvalidArgument);
    auto column = detail::ColumnAccess::make(type_, size_, std::move(validity_), std::move(data_),
                                             std::move(characters_));
    size_ = 0;
    null_count_ = 0;
    validity_ = ColumnBuffer();
    data_ = Column::initial_data(type_);
    characters_ = ColumnBuffer();
    return column;
}

}  // namespace spillway::table
