#include <spillway/table/column.hpp>

#include <algorithm>
#include <cstring>
#include <string>

#include "bitmap.hpp"
#include "column_access.hpp"
#include "small_copy.hpp"
#include "value_width.hpp"

namespace spillway::table {
namespace {

std::int32_t load_offset(std::span<std::byte const> data, std::size_t index) noexcept {
    std::int32_t offset;
    std::memcpy(&offset, data.data() + index * sizeof(offset), sizeof(offset));
    return offset;
}

/// Copies the `Word`-sized values at `rows` of `source` to `destination`, in order.
template <typename Word>
void gather_values(std::byte const* source, std::span<std::uint32_t const> rows, std::byte* destination) {
    auto const* in = reinterpret_cast<Word const*>(source);
    auto* out = reinterpret_cast<Word*>(destination);
    for (std::size_t index = 0; index < rows.size(); ++index) {
        out[index] = in[rows[index]];
    }
}

/// What is wrong with a `boolean` column's values: a valid row holding
/// neither 0 nor 1; empty if nothing is.
std::string boolean_problem(std::size_t size, std::span<std::byte const> validity, std::span<std::byte const> data) {
    for (std::size_t row = 0; row < size; ++row) {
        auto const value = std::to_integer<unsigned>(data[row]);
        if (value > 1 && (validity.empty() || detail::get_bit(validity.data(), row))) {
            return "boolean value " + std::to_string(value) + " at row " + std::to_string(row)
                 + "; a boolean is 0 or 1";
        }
    }
    return {};
}

/// The validity bits of `rows` of `source`, in order.
ColumnBuffer gather_bits(std::byte const* source, std::span<std::uint32_t const> rows) {
    ColumnBuffer bits(detail::bitmap_bytes(rows.size()));
    for (std::size_t byte = 0; byte < bits.size(); ++byte) {
        auto const first = byte * 8;
        auto const last = std::min(first + 8, rows.size());
        unsigned value = 0;
        for (auto row = first; row < last; ++row) {
            value |= static_cast<unsigned>(detail::get_bit(source, rows[row])) << (row - first);
        }
        bits[byte] = static_cast<std::byte>(value);
    }
    return bits;
}

}  // namespace

namespace detail {

std::string column_problem(DataType type, std::size_t size, std::span<std::byte const> validity,
                           std::span<std::byte const> data, std::span<std::byte const> characters) {
    auto const type_name = std::string(to_string(type));
    if (size > Column::max_rows) {
        return type_name + " column of " + std::to_string(size) + " rows; a column holds at most "
             + std::to_string(Column::max_rows);
    }
    if (!validity.empty() && validity.size() != bitmap_bytes(size)) {
        return "validity bitmap of " + std::to_string(validity.size()) + " bytes for "
             + std::to_string(size) + " rows, which need " + std::to_string(bitmap_bytes(size));
    }
    if (type != DataType::string) {
        if (data.size() != size * data_width(type)) {
            return type_name + " data buffer of " + std::to_string(data.size()) + " bytes for "
                 + std::to_string(size) + " rows, which need " + std::to_string(size * data_width(type));
        }
        if (!characters.empty()) {
            return type_name + " column with " + std::to_string(characters.size())
                 + " bytes of characters; only string columns have characters";
        }
        if (type == DataType::boolean) {
            return boolean_problem(size, validity, data);
        }
        return {};
    }
    if (data.size() != (size + 1) * sizeof(std::int32_t)) {
        return "string offsets buffer of " + std::to_string(data.size()) + " bytes for "
             + std::to_string(size) + " rows, which need " + std::to_string((size + 1) * sizeof(std::int32_t));
    }
    if (load_offset(data, 0) != 0) {
        return "string offsets start at " + std::to_string(load_offset(data, 0)) + " instead of 0";
    }
    // One pass without an exit, which the compiler vectorizes; the row is
    // looked for only in a column that has one.
    bool decreasing = false;
    for (std::size_t row = 0; row < size; ++row) {
        decreasing |= load_offset(data, row + 1) < load_offset(data, row);
    }
    for (std::size_t row = 0; decreasing && row < size; ++row) {
        if (load_offset(data, row + 1) < load_offset(data, row)) {
            return "string offsets decrease at row " + std::to_string(row);
        }
    }
    if (static_cast<std::size_t>(load_offset(data, size)) != characters.size()) {
        return "string offsets end at " + std::to_string(load_offset(data, size)) + " but there are "
             + std::to_string(characters.size()) + " bytes of characters";
    }
    return {};
}

Column ColumnAccess::make(DataType type, std::size_t size, ColumnBuffer validity, ColumnBuffer data,
                          ColumnBuffer characters) {
    std::size_t null_count = 0;
    if (!validity.empty()) {
        if (size % 8 != 0) {
            validity.back() &= static_cast<std::byte>((1U << (size % 8)) - 1);
        }
        null_count = size - count_set_bits(validity.data(), size);
        if (null_count == 0) {
            validity = ColumnBuffer();
        }
    }
    return Column(type, size, null_count, std::move(validity), std::move(data), std::move(characters));
}

}  // namespace detail

Column::Column(DataType type, std::size_t size, std::size_t null_count, ColumnBuffer validity,
               ColumnBuffer data, ColumnBuffer characters) noexcept
    : type_(type),
      size_(size),
      null_count_(null_count),
      validity_(std::move(validity)),
      data_(std::move(data)),
      characters_(std::move(characters)) {}

ColumnBuffer Column::initial_data(DataType type) {
    // A string column's offsets start with one 0; other types start empty.
    return type == DataType::string ? ColumnBuffer(sizeof(std::int32_t), std::byte{0}) : ColumnBuffer();
}

Column Column::from_buffers(DataType type, std::size_t size, ColumnBuffer validity, ColumnBuffer data,
                            ColumnBuffer characters) {
    auto const problem = detail::column_problem(type, size, validity, data, characters);
    SPILLWAY_EXPECTS(problem.empty(), "invalid column buffers: " << problem, InvalidArgument);
    return detail::ColumnAccess::make(type, size, std::move(validity), std::move(data), std::move(characters));
}

Column Column::slice(std::size_t begin, std::size_t count) const {
    SPILLWAY_EXPECTS(begin <= size_ && count <= size_ - begin,
                     "slice of rows [" << begin << ", " << begin + count << ") of a column of " << size_ << " rows",
                     InvalidArgument);
    ColumnBuffer validity;
    if (null_count_ != 0) {
        validity.resize(detail::bitmap_bytes(count));
        detail::copy_bits(validity_.data(), begin, validity.data(), 0, count);
    }
    ColumnBuffer characters;
    ColumnBuffer data;
    if (type_ == DataType::string) {
        auto const all = offsets();
        auto const base = all[begin];
        data.resize((count + 1) * sizeof(std::int32_t));
        auto* out = reinterpret_cast<std::int32_t*>(data.data());
        for (std::size_t row = 0; row <= count; ++row) {
            out[row] = all[begin + row] - base;
        }
        characters.assign(characters_.begin() + base, characters_.begin() + all[begin + count]);
    } else {
        auto const width = data_width(type_);
        data.assign(data_.begin() + static_cast<std::ptrdiff_t>(begin * width),
                    data_.begin() + static_cast<std::ptrdiff_t>((begin + count) * width));
    }
    return detail::ColumnAccess::make(type_, count, std::move(validity), std::move(data), std::move(characters));
}

Column Column::take(std::span<std::uint32_t const> rows) const {
    SPILLWAY_EXPECTS(rows.size() <= max_rows, "taking " << rows.size() << " rows; a column holds at most " << max_rows,
                     InvalidArgument);
    std::uint32_t largest = 0;
    for (auto const row : rows) {  // a reduction the compiler vectorizes, unlike max_element
        largest = std::max(largest, row);
    }
    SPILLWAY_EXPECTS(rows.empty() || largest < size_,
                     "taking row " << largest << " of a column of " << size_ << " rows", InvalidArgument);
    ColumnBuffer validity = null_count_ == 0 ? ColumnBuffer() : gather_bits(validity_.data(), rows);
    ColumnBuffer data;
    ColumnBuffer characters;
    if (type_ == DataType::string) {
        auto const all = offsets();
        data.resize((rows.size() + 1) * sizeof(std::int32_t));
        auto* out = reinterpret_cast<std::int32_t*>(data.data());
        std::size_t total = 0;  // cannot overflow: at most max_rows rows of max_characters each
        out[0] = 0;
        for (std::size_t index = 0; index < rows.size(); ++index) {
            total += static_cast<std::size_t>(all[rows[index] + 1] - all[rows[index]]);
            out[index + 1] = static_cast<std::int32_t>(total);
        }
        SPILLWAY_EXPECTS(total <= max_characters,
                         "the rows taken hold more than " << max_characters
                             << " bytes of characters, the most a string column holds; take fewer rows",
                         InvalidArgument);
        characters.resize(total);
        // Rows that follow one another in the column keep their characters
        // together: a run of them (most rows, behind a filter that keeps
        // most) is one copy.
        for (std::size_t index = 0; index < rows.size();) {
            auto end = index + 1;
            while (end < rows.size() && rows[end] == rows[end - 1] + 1) {
                ++end;
            }
            detail::copy_small(characters.data() + out[index], characters_.data() + all[rows[index]],
                               static_cast<std::size_t>(out[end] - out[index]));
            index = end;
        }
    } else {
        data.resize(rows.size() * data_width(type_));
        detail::visit_value_width(type_, [&]<typename Word>(Word) {
            gather_values<Word>(data_.data(), rows, data.data());
        });
    }
    return detail::ColumnAccess::make(type_, rows.size(), std::move(validity), std::move(data),
                                      std::move(characters));
}

bool operator==(Column const& left, Column const& right) {
    if (left.type_ != right.type_ || left.size_ != right.size_ || left.null_count_ != right.null_count_) {
        return false;
    }
    if (left.null_count_ == 0) {
        return std::ranges::equal(left.data_, right.data_) && std::ranges::equal(left.characters_, right.characters_);
    }
    if (!std::ranges::equal(left.validity_, right.validity_)) {
        return false;
    }
    auto const width = data_width(left.type_);
    for (std::size_t row = 0; row < left.size_; ++row) {
        if (left.is_null(row)) {
            continue;
        }
        bool const same = left.type_ == DataType::string
                            ? left.string(row) == right.string(row)
                            : std::memcmp(left.data_.data() + row * width, right.data_.data() + row * width, width) == 0;
        if (!same) {
            return false;
        }
    }
    return true;
}

}  // namespace spillway::table
