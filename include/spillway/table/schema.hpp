#pragma once
/// @file
/// The names and types of a table's columns.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <spillway/table/data_type.hpp>

namespace spillway::table {

/// One column's name and type.
struct Field {
    std::string name;
    DataType type;

    friend bool operator==(Field const&, Field const&) = default;
};

/// The ordered fields of a table. Names are unique.
///
/// Thread safety: const member functions may be called concurrently. Copies
/// are independent.
class Schema {
  public:
    /// No fields.
    Schema() = default;

    /// A schema of `fields`, in order.
    /// @throws InvalidArgument if two fields have the same name.
    explicit Schema(std::vector<Field> fields);

    /// The fields in column order.
    [[nodiscard]] std::vector<Field> const& fields() const noexcept { return fields_; }
    /// The number of fields.
    [[nodiscard]] std::size_t size() const noexcept { return fields_.size(); }
    /// The field of column `index`. Requires: `index < size()`.
    [[nodiscard]] Field const& field(std::size_t index) const { return fields_.at(index); }

    /// The index of the column named `name`, or nothing if there is none.
    [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const noexcept;
    /// The index of the column named `name`.
    /// @throws InvalidArgument naming the columns there are if none is called `name`.
    [[nodiscard]] std::size_t index_of(std::string_view name) const;

    /// The fields as `name:type` separated by `, `, for messages.
    [[nodiscard]] std::string to_string() const;

    friend bool operator==(Schema const&, Schema const&) = default;

  private:
    std::vector<Field> fields_;  ///< names unique
};

}  // namespace spillway::table
