#include <spillway/table/arrow_interop.hpp>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spillway/core/error.hpp>

#include "bitmap.hpp"
#include "column_access.hpp"

namespace spillway::table {
namespace {

std::string_view arrow_format(DataType type) noexcept {
    switch (type) {
        case DataType::int32: return "i";
        case DataType::int64: return "l";
        case DataType::float64: return "g";
        case DataType::date32: return "tdD";
        case DataType::string: return "u";
        case DataType::boolean: return "b";
        case DataType::timestamp_ms: return "tsm:";
        case DataType::timestamp_us: return "tsu:";
        case DataType::timestamp_ns: return "tsn:";
        case DataType::timestamp_ms_utc: return "tsm:UTC";
        case DataType::timestamp_us_utc: return "tsu:UTC";
        case DataType::timestamp_ns_utc: return "tsn:UTC";
    }
    return "";
}

/// The type of an Arrow format string; a timestamp with any time zone is an
/// instant (`_utc`), since Arrow stores those in UTC.
std::optional<DataType> type_of_format(std::string_view format) noexcept {
    if (format.size() >= 4 && format.starts_with("ts") && format[3] == ':') {
        auto const zoned = format.size() > 4;
        switch (format[2]) {
            case 'm': return zoned ? DataType::timestamp_ms_utc : DataType::timestamp_ms;
            case 'u': return zoned ? DataType::timestamp_us_utc : DataType::timestamp_us;
            case 'n': return zoned ? DataType::timestamp_ns_utc : DataType::timestamp_ns;
            default: return std::nullopt;
        }
    }
    for (auto const type : {DataType::int32, DataType::int64, DataType::float64, DataType::date32, DataType::string,
                            DataType::boolean}) {
        if (arrow_format(type) == format) {
            return type;
        }
    }
    return std::nullopt;
}

/// The bitmap Arrow holds a `boolean` column's values in, one bit a row.
ColumnBuffer pack_booleans(Column const& column) {
    ColumnBuffer bits(detail::bitmap_bytes(column.size()), std::byte{0});
    auto const values = column.values<std::uint8_t>();
    for (std::size_t row = 0; row < values.size(); ++row) {
        detail::set_bit(bits.data(), row, values[row] != 0);
    }
    return bits;
}

/// Where an empty buffer points, since the specification wants mandatory
/// buffers non-null.
alignas(64) constexpr std::array<std::byte, 64> empty_buffer{};

void const* buffer_address(std::span<std::byte const> buffer) noexcept {
    return buffer.empty() ? empty_buffer.data() : buffer.data();
}

/// The children an exported `ArrowSchema` or `ArrowArray` owns. Destroying
/// it releases the children that were not moved out (a moved-out child has
/// a null `release`).
template <typename Arrow>
struct Children {
    std::vector<Arrow> children;  ///< value-initialized: `release` null until written
    std::vector<Arrow*> child_pointers;

    Children() = default;
    Children(Children const&) = delete;
    Children& operator=(Children const&) = delete;
    ~Children() {
        for (auto& child : children) {
            if (child.release != nullptr) {
                child.release(&child);
            }
        }
    }

    /// Makes room for `count` children and points `child_pointers` at them.
    void resize(std::size_t count) {
        children.resize(count);
        for (auto& child : children) {
            child_pointers.push_back(&child);
        }
    }
    /// The `children` member of the exported structure.
    Arrow** pointers() noexcept { return child_pointers.empty() ? nullptr : child_pointers.data(); }
};

/// What an exported `ArrowSchema` owns: its strings and children.
struct SchemaNode : Children<ArrowSchema> {
    std::string format;
    std::string name;
};

/// What an exported `ArrowArray` owns: a share of the table its buffers point
/// into, and its children.
struct ArrayNode : Children<ArrowArray> {
    std::shared_ptr<Table const> table;
    ColumnBuffer boolean_bits;  ///< a `boolean` column's values as Arrow holds them
    std::array<void const*, 3> buffers{};
};

/// The release callback of structures whose private data is a `Node`.
template <typename Node, typename Arrow>
void release(Arrow* released) {
    std::unique_ptr<Node> const node(static_cast<Node*>(released->private_data));
    released->release = nullptr;
}

void write_schema(ArrowSchema* out, std::string_view format, std::string_view name, std::int64_t flags,
                  std::span<Field const> children) {
    auto node = std::make_unique<SchemaNode>();
    node->format = format;
    node->name = name;
    node->resize(children.size());
    for (std::size_t index = 0; index < children.size(); ++index) {
        write_schema(&node->children[index], arrow_format(children[index].type), children[index].name,
                     ARROW_FLAG_NULLABLE, {});
    }
    *out = ArrowSchema{node->format.c_str(),
                       node->name.c_str(),
                       nullptr,
                       flags,
                       static_cast<std::int64_t>(children.size()),
                       node->pointers(),
                       nullptr,
                       &release<SchemaNode, ArrowSchema>,
                       node.get()};
    static_cast<void>(node.release());  // now owned by *out, freed by its release callback
}

void write_column_array(ArrowArray* out, std::shared_ptr<Table const> const& table, std::size_t index) {
    auto node = std::make_unique<ArrayNode>();
    node->table = table;
    auto const& column = table->column(index);
    node->buffers[0] = column.null_count() == 0 ? nullptr : column.validity_buffer().data();
    if (column.type() == DataType::boolean) {
        node->boolean_bits = pack_booleans(column);
        node->buffers[1] = buffer_address(node->boolean_bits);
    } else {
        node->buffers[1] = buffer_address(column.data_buffer());
    }
    node->buffers[2] = buffer_address(column.character_buffer());
    *out = ArrowArray{static_cast<std::int64_t>(column.size()),
                      static_cast<std::int64_t>(column.null_count()),
                      0,
                      column.type() == DataType::string ? 3 : 2,
                      0,
                      node->buffers.data(),
                      nullptr,
                      nullptr,
                      &release<ArrayNode, ArrowArray>,
                      node.get()};
    static_cast<void>(node.release());  // now owned by *out, freed by its release callback
}

/// Releases what `import_table` was handed when it returns or throws.
class ReleaseOnExit {
  public:
    ReleaseOnExit(ArrowSchema* schema, ArrowArray* array) : schema_(schema), array_(array) {}
    ReleaseOnExit(ReleaseOnExit const&) = delete;
    ReleaseOnExit& operator=(ReleaseOnExit const&) = delete;
    ~ReleaseOnExit() {
        if (array_ != nullptr && array_->release != nullptr) {
            array_->release(array_);
        }
        if (schema_ != nullptr && schema_->release != nullptr) {
            schema_->release(schema_);
        }
    }

  private:
    ArrowSchema* schema_;
    ArrowArray* array_;
};

/// Whether rows [start, start + rows) of an array with this null count and
/// validity bitmap hold a null.
bool has_nulls(std::int64_t null_count, void const* validity, std::size_t start, std::size_t rows) noexcept {
    if (null_count == 0 || validity == nullptr) {
        return false;
    }
    auto const* bits = static_cast<std::byte const*>(validity);
    for (std::size_t row = start; row < start + rows; ++row) {
        if (!detail::get_bit(bits, row)) {
            return true;
        }
    }
    return false;
}

Column import_column(ArrowSchema const& schema, ArrowArray const& array, std::string const& name,
                     std::size_t struct_offset, std::size_t rows) {
    std::string_view const format = schema.format == nullptr ? "" : schema.format;
    auto const type = type_of_format(format);
    SPILLWAY_EXPECTS(type.has_value() && schema.dictionary == nullptr,
                     "column '" << name << "' has Arrow format '" << format
                                << "'; spillway imports i (int32), l (int64), g (float64), tdD (date32), u (utf8), "
                                   "b (boolean) and timestamps in milli-, micro- or nanoseconds (tsm:, tsu:, tsn:, "
                                   "with or without a time zone), without dictionaries",
                     InvalidArgument);
    SPILLWAY_EXPECTS(array.n_buffers == (*type == DataType::string ? 3 : 2) && array.buffers != nullptr,
                     "column '" << name << "' has " << array.n_buffers << " buffers; its format '" << format
                                << "' needs " << (*type == DataType::string ? 3 : 2),
                     InvalidArgument);
    SPILLWAY_EXPECTS(array.offset >= 0 && array.length >= 0
                         && static_cast<std::size_t>(array.length) >= struct_offset + rows,
                     "column '" << name << "' has " << array.length << " rows but the struct needs "
                                << struct_offset + rows,
                     InvalidArgument);
    if (rows == 0) {
        return Column(*type);
    }
    auto const start = static_cast<std::size_t>(array.offset) + struct_offset;
    ColumnBuffer validity;
    if (has_nulls(array.null_count, array.buffers[0], start, rows)) {
        validity.resize(detail::bitmap_bytes(rows));
        detail::copy_bits(static_cast<std::byte const*>(array.buffers[0]), start, validity.data(), 0, rows);
    }
    auto const* data = static_cast<std::byte const*>(array.buffers[1]);
    ColumnBuffer values;
    ColumnBuffer characters;
    if (*type == DataType::string) {
        auto const* offsets = reinterpret_cast<std::int32_t const*>(data) + start;
        auto const first = offsets[0];
        auto const last = offsets[rows];
        SPILLWAY_EXPECTS(first >= 0 && last >= first,
                         "column '" << name << "' has string offsets from " << first << " to " << last, InvalidArgument);
        values.resize((rows + 1) * sizeof(std::int32_t));
        auto* rebased = reinterpret_cast<std::int32_t*>(values.data());
        for (std::size_t row = 0; row <= rows; ++row) {
            rebased[row] = offsets[row] - first;
        }
        auto const* text = static_cast<std::byte const*>(array.buffers[2]);
        characters.assign(text + first, text + last);
    } else if (*type == DataType::boolean) {
        values.resize(rows);
        for (std::size_t row = 0; row < rows; ++row) {
            values[row] = static_cast<std::byte>(detail::get_bit(data, start + row));
        }
    } else {
        auto const width = data_width(*type);
        values.assign(data + start * width, data + (start + rows) * width);
    }
    auto const problem = detail::column_problem(*type, rows, validity, values, characters);
    SPILLWAY_EXPECTS(problem.empty(), "column '" << name << "': " << problem, InvalidArgument);
    return detail::ColumnAccess::make(*type, rows, std::move(validity), std::move(values), std::move(characters));
}

/// The node of a struct array over `shared`'s columns, each child written.
std::unique_ptr<ArrayNode> array_node(std::shared_ptr<Table const> const& shared) {
    auto node = std::make_unique<ArrayNode>();
    node->table = shared;
    node->resize(shared->num_columns());
    for (std::size_t index = 0; index < shared->num_columns(); ++index) {
        write_column_array(&node->children[index], shared, index);
    }
    return node;
}

/// The struct array of `node`, which its release callback then owns.
ArrowArray struct_array(std::unique_ptr<ArrayNode> node) noexcept {
    auto const& table = *node->table;
    ArrowArray const array{static_cast<std::int64_t>(table.num_rows()),
                           0,
                           0,
                           1,
                           static_cast<std::int64_t>(table.num_columns()),
                           node->buffers.data(),
                           node->pointers(),
                           nullptr,
                           &release<ArrayNode, ArrowArray>,
                           node.get()};
    static_cast<void>(node.release());  // now owned by the array, freed by its release callback
    return array;
}

}  // namespace

void export_schema(Schema const& schema, ArrowSchema* out) {
    SPILLWAY_EXPECTS(out != nullptr, "exporting a schema to a null ArrowSchema", InvalidArgument);
    write_schema(out, "+s", "", 0, schema.fields());
}

void export_table(Table table, ArrowSchema* schema_out, ArrowArray* array_out) {
    export_table(std::make_shared<Table const>(std::move(table)), schema_out, array_out);
}

void export_table(std::shared_ptr<Table const> const& shared, ArrowSchema* schema_out, ArrowArray* array_out) {
    SPILLWAY_EXPECTS(schema_out != nullptr && array_out != nullptr,
                     "exporting a table to a null ArrowSchema or ArrowArray", InvalidArgument);
    SPILLWAY_EXPECTS(shared != nullptr, "exporting a null table", InvalidArgument);
    auto node = array_node(shared);
    ArrowSchema schema;
    export_schema(shared->schema(), &schema);
    *array_out = struct_array(std::move(node));
    *schema_out = schema;
}

void export_array(Table table, ArrowArray* array_out) {
    SPILLWAY_EXPECTS(array_out != nullptr, "exporting a table to a null ArrowArray", InvalidArgument);
    *array_out = struct_array(array_node(std::make_shared<Table const>(std::move(table))));
}

Table import_table(ArrowSchema* schema, ArrowArray* array) {
    ReleaseOnExit const release(schema, array);
    SPILLWAY_EXPECTS(schema != nullptr && array != nullptr, "importing a null ArrowSchema or ArrowArray",
                     InvalidArgument);
    SPILLWAY_EXPECTS(schema->release != nullptr && array->release != nullptr,
                     "importing an ArrowSchema or ArrowArray that was already released", InvalidArgument);
    std::string_view const format = schema->format == nullptr ? "" : schema->format;
    SPILLWAY_EXPECTS(format == "+s",
                     "importing an Arrow array of format '" << format << "'; a table is imported from a struct (+s)",
                     InvalidArgument);
    SPILLWAY_EXPECTS(schema->n_children == array->n_children && array->n_children >= 0,
                     "the Arrow schema has " << schema->n_children << " children but the array " << array->n_children,
                     InvalidArgument);
    SPILLWAY_EXPECTS(array->length >= 0 && array->offset >= 0
                         && static_cast<std::size_t>(array->length) <= Column::max_rows,
                     "importing a struct array of " << array->length << " rows at offset " << array->offset
                                                    << "; a table holds at most " << Column::max_rows,
                     InvalidArgument);
    SPILLWAY_EXPECTS(array->n_children > 0 || array->length == 0,
                     "importing a struct array of " << array->length << " rows without columns; a table without "
                                                       "columns has no rows",
                     InvalidArgument);
    auto const rows = static_cast<std::size_t>(array->length);
    auto const offset = static_cast<std::size_t>(array->offset);
    SPILLWAY_EXPECTS(array->n_buffers < 1 || !has_nulls(array->null_count, array->buffers[0], offset, rows),
                     "the Arrow struct array has null rows, which a table cannot hold", InvalidArgument);
    std::vector<Field> fields;
    std::vector<Column> columns;
    for (std::int64_t index = 0; index < array->n_children; ++index) {
        auto const& child_schema = *schema->children[index];
        std::string name = child_schema.name == nullptr ? "" : child_schema.name;
        columns.push_back(import_column(child_schema, *array->children[index], name, offset, rows));
        fields.push_back({std::move(name), columns.back().type()});
    }
    return Table(Schema(std::move(fields)), std::move(columns));
}

}  // namespace spillway::table
