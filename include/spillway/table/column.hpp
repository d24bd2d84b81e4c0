#pragma once
/// @file
/// An immutable column of typed values with an optional validity bitmap.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

#include <spillway/core/error.hpp>
#include <spillway/table/column_buffer.hpp>
#include <spillway/table/data_type.hpp>

namespace spillway::table {
namespace detail {
struct ColumnAccess;
}

/// The values of one column, laid out as in the Arrow columnar format:
///
/// - a validity bitmap, present only when the column has nulls: bit `i % 8`
///   (least significant first) of byte `i / 8` is set when row `i` is valid;
/// - a data buffer: the values (`size() * data_width(type())` bytes), or for
///   `string` `size() + 1` 32-bit offsets that start at 0 and never decrease;
/// - for `string`, a character buffer: row `i` is the bytes from
///   `offsets()[i]` to `offsets()[i + 1]`.
///
/// The value stored under a null is unspecified and ignored by every
/// operation. A column holds at most `max_rows` rows and, for `string`, at
/// most `max_characters` bytes of characters. Build one with `ColumnBuilder`.
///
/// Thread safety: immutable, so const member functions may be called
/// concurrently. Copies are deep and independent; moves are cheap.
class Column {
  public:
    /// The most rows a column holds.
    static constexpr std::size_t max_rows = std::numeric_limits<std::uint32_t>::max();
    /// The most bytes of characters a `string` column holds.
    static constexpr std::size_t max_characters = std::numeric_limits<std::int32_t>::max();

    /// An empty column of `type`.
    explicit Column(DataType type) : Column(type, 0, 0, {}, initial_data(type), {}) {}

    /// A column of `size` rows made from its buffers, which it takes over.
    /// `validity` is empty (no nulls) or exactly `(size + 7) / 8` bytes; bits
    /// past `size` are ignored. `data` is laid out as the class comment says;
    /// `characters` is empty unless `type` is `string`.
    /// @throws InvalidArgument naming the first inconsistency if the buffers
    /// do not describe a valid column.
    static Column from_buffers(
        DataType type, std::size_t size, ColumnBuffer validity, ColumnBuffer data,
        ColumnBuffer characters
    );

    /// The type of every value.
    [[nodiscard]] DataType type() const noexcept { return type_; }
    /// The number of rows.
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    /// The number of null rows.
    [[nodiscard]] std::size_t null_count() const noexcept { return null_count_; }
    /// Whether row `row` is null. Requires: `row < size()`.
    [[nodiscard]] bool is_null(std::size_t row) const noexcept {
        return null_count_ != 0
            && (std::to_integer<unsigned>(validity_[row / 8]) >> (row % 8) & 1U) == 0;
    }

    /// The values, one per row. Requires: `stores_values_as<T>(type())`.
    /// @throws InvalidArgument if `T` is not what this column stores.
    template <typename T>
    [[nodiscard]] std::span<T const> values() const {
        SPILLWAY_EXPECTS(stores_values_as<T>(type_),
                         "a " << to_string(type_) << " column does not store values of the requested type",
                         InvalidArgument);
        return {reinterpret_cast<T const*>(data_.data()), size_};
    }
    /// The `size() + 1` offsets of a `string` column into `characters()`.
    /// @throws InvalidArgument if the column is not `string`.
    [[nodiscard]] std::span<std::int32_t const> offsets() const {
        expect_string("string offsets");
        return {reinterpret_cast<std::int32_t const*>(data_.data()), size_ + 1};
    }
    /// The characters of every row of a `string` column, back to back.
    /// @throws InvalidArgument if the column is not `string`.
    [[nodiscard]] std::string_view characters() const {
        expect_string("characters");
        return {reinterpret_cast<char const*>(characters_.data()), characters_.size()};
    }
    /// The value of row `row` of a `string` column; empty for a null.
    /// @throws InvalidArgument if the column is not `string` or `row >= size()`.
    [[nodiscard]] std::string_view string(std::size_t row) const {
        SPILLWAY_EXPECTS(row < size_, "row " << row << " of a column of " << size_ << " rows", InvalidArgument);
        expect_string("strings");
        if (is_null(row)) {
            return {};  // whatever characters lie under it
        }
        auto const* all = reinterpret_cast<std::int32_t const*>(data_.data());
        return {reinterpret_cast<char const*>(characters_.data()) + all[row],
                static_cast<std::size_t>(all[row + 1] - all[row])};
    }

    /// The validity bitmap; empty when the column has no nulls.
    [[nodiscard]] std::span<std::byte const> validity_buffer() const noexcept { return validity_; }
    /// The values, or the offsets of a `string` column.
    [[nodiscard]] std::span<std::byte const> data_buffer() const noexcept { return data_; }
    /// The characters of a `string` column; empty for other types.
    [[nodiscard]] std::span<std::byte const> character_buffer() const noexcept { return characters_; }
    /// The bytes of all three buffers together.
    [[nodiscard]] std::size_t byte_size() const noexcept {
        return validity_.size() + data_.size() + characters_.size();
    }

    /// A copy of the `count` rows from `begin`.
    /// @throws InvalidArgument if `begin + count > size()`.
    [[nodiscard]] Column slice(std::size_t begin, std::size_t count) const;

    /// A column of the rows `rows[0], rows[1], ...` of this one, in that order;
    /// a row may appear any number of times.
    /// @throws InvalidArgument if a row is out of range, or the result would
    /// exceed the limits the class comment states.
    [[nodiscard]] Column take(std::span<std::uint32_t const> rows) const;

    /// Whether both have the same type, size, nulls and valid values. Values
    /// under nulls are ignored; `float64` values compare by bit pattern, so
    /// NaN equals itself and 0.0 differs from -0.0.
    friend bool operator==(Column const& left, Column const& right);

  private:
    friend class ColumnBuilder;
    friend struct detail::ColumnAccess;

    /// Takes the buffers as they are. Requires: they are valid for the other arguments.
    Column(DataType type, std::size_t size, std::size_t null_count, ColumnBuffer validity,
           ColumnBuffer data, ColumnBuffer characters) noexcept;

    /// The data buffer of an empty column: one zero offset for `string`, else nothing.
    static ColumnBuffer initial_data(DataType type);

    /// @throws InvalidArgument saying the column has no `what` if it is not `string`.
    void expect_string(char const* what) const {
        SPILLWAY_EXPECTS(type_ == DataType::string, "a " << to_string(type_) << " column has no " << what,
                         InvalidArgument);
    }

    DataType type_;
    std::size_t size_;
    std::size_t null_count_;  ///< null rows; 0 exactly when validity_ is empty
    ColumnBuffer validity_;   ///< empty, or (size_ + 7) / 8 bytes with the bits past size_ clear
    ColumnBuffer data_;        ///< size_ values, or size_ + 1 offsets for string
    ColumnBuffer characters_;  ///< string only: offsets().back() bytes
};

}  // namespace spillway::table
