#pragma once
/// @file
/// Builds a `Column` by appending values one row at a time.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include <spillway/table/column.hpp>

namespace spillway::table {

/// Appends rows to a column under construction, then hands the column over
/// with `finish`. Appending is amortized O(1) and allocates only when a
/// buffer grows; `reserve` avoids even that. The validity bitmap is created
/// at the first null.
///
/// Thread safety: externally synchronized.
class ColumnBuilder {
  public:
    /// An empty builder of a column of `type`.
    explicit ColumnBuilder(DataType type);

    /// The type of the column being built.
    [[nodiscard]] DataType type() const noexcept { return type_; }
    /// The rows appended since construction or the last `finish`.
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

    /// Makes room for `rows` more rows and, for `string`, `characters` more bytes.
    void reserve(std::size_t rows, std::size_t characters = 0);

    /// Appends a value to an `int32` or `date32` column.
    /// @throws InvalidArgument if the column stores another type.
    void append(std::int32_t value) { append_fixed(value); }
    /// Appends a value to an `int64` column, or a timestamp's ticks to a timestamp column.
    /// @throws InvalidArgument if the column stores another type.
    void append(std::int64_t value) { append_fixed(value); }
    /// Appends a value to a `boolean` column. Only a `bool` argument picks
    /// this overload: a pointer or number that converts to one does not.
    /// @throws InvalidArgument if the column stores another type.
    template <std::same_as<bool> Bool>
    void append(Bool value) {
        append_fixed(static_cast<std::uint8_t>(value));
    }
    /// Appends a value to a `float64` column.
    /// @throws InvalidArgument if the column stores another type.
    void append(double value) { append_fixed(value); }
    /// Appends a copy of `value` to a `string` column.
    /// @throws InvalidArgument if the column is not `string`, or if its
    /// characters would exceed `Column::max_characters` (use smaller chunks).
    void append(std::string_view value);
    /// Appends a null.
    void append_null();
    /// Removes every row after the first `rows`, keeping the capacity.
    /// Requires: `rows <= size()` (asserted).
    void truncate(std::size_t rows);

    /// The column of every row appended; the builder is empty afterwards. The
    /// column's buffers keep the capacity they grew to (under twice their
    /// size unless `reserve` asked for more); `Column::byte_size` counts the
    /// bytes in use.
    /// @throws InvalidArgument if the column would exceed `Column::max_rows`.
    [[nodiscard]] Column finish();

  private:
    template <typename T>
    void append_fixed(T value) {
        if (!stores_values_as<T>(type_)) [[unlikely]] {
            fail_wrong_type("this value");
        }
        auto const end = data_.size();
        data_.resize(end + sizeof(T));
        std::memcpy(data_.data() + end, &value, sizeof(T));
        mark_valid();
    }

    /// Records the row just appended as valid and counts it.
    void mark_valid() {
        if (null_count_ != 0) {
            set_validity_bit(true);
        }
        ++size_;
    }
    /// Writes the validity bit of row `size_`.
    void set_validity_bit(bool valid);
    /// Throws `InvalidArgument`: `what` cannot be appended to this column.
    [[noreturn]] void fail_wrong_type(char const* what) const;

    DataType type_;
    std::size_t size_ = 0;
    std::size_t null_count_ = 0;
    ColumnBuffer validity_;    ///< empty until the first null, then one bit per row
    ColumnBuffer data_;        ///< size_ values, or size_ + 1 offsets for string
    ColumnBuffer characters_;  ///< string only
};

}  // namespace spillway::table
