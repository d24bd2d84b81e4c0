#include "arrow_tables.hpp"

#include <arrow/c/bridge.h>
#include <arrow/compute/cast.h>
#include <arrow/compute/initialize.h>

#include <mutex>

#include <spillway/core/error.hpp>
#include <spillway/table/arrow_interop.hpp>

namespace spillway::io::detail {
namespace {

/// The Arrow type spillway reads a column of `type` as, or null if none.
std::shared_ptr<arrow::DataType> readable_type(arrow::DataType const& type) {
    switch (type.id()) {
        case arrow::Type::INT8:
        case arrow::Type::INT16:
        case arrow::Type::UINT8:
        case arrow::Type::UINT16:
        case arrow::Type::INT32: return arrow::int32();
        case arrow::Type::UINT32:
        case arrow::Type::INT64: return arrow::int64();
        case arrow::Type::HALF_FLOAT:
        case arrow::Type::FLOAT:
        case arrow::Type::DOUBLE: return arrow::float64();
        case arrow::Type::DATE32: return arrow::date32();
        case arrow::Type::STRING:
        case arrow::Type::LARGE_STRING:
        case arrow::Type::STRING_VIEW: return arrow::utf8();
        case arrow::Type::DICTIONARY: {
            auto const values = readable_type(*static_cast<arrow::DictionaryType const&>(type).value_type());
            return values != nullptr && values->id() == arrow::Type::STRING ? values : nullptr;
        }
        default: return nullptr;
    }
}

/// Registers Arrow's cast kernels once.
void initialize_compute() {
    static std::once_flag once;
    std::call_once(once, [] { check(arrow::compute::Initialize(), "cannot initialize Arrow's compute functions"); });
}

}  // namespace

void check(arrow::Status const& status, std::string const& what) {
    if (status.ok()) {
        return;
    }
    if (status.IsInvalid() || status.IsSerializationError()) {
        SPILLWAY_FAIL(what << ": " << status.message(), CorruptData);
    }
    SPILLWAY_FAIL(what << ": " << status.ToString(), IoError);
}

table::Schema to_spillway(arrow::Schema const& schema, std::string const& file) {
    std::vector<table::Field> fields;
    for (auto const& field : schema.fields()) {
        auto const type = readable_type(*field->type());
        SPILLWAY_EXPECTS(type != nullptr,
                         "'" << file << "': column '" << field->name() << "' has the type " << field->type()->ToString()
                             << ", which spillway does not read; its types are int32, int64, float64, date32 and "
                                "string (narrower integers, float32 and other strings are converted)",
                         InvalidArgument);
        auto const spillway_type = type->id() == arrow::Type::INT32    ? table::DataType::int32
                                 : type->id() == arrow::Type::INT64    ? table::DataType::int64
                                 : type->id() == arrow::Type::DOUBLE   ? table::DataType::float64
                                 : type->id() == arrow::Type::DATE32   ? table::DataType::date32
                                                                       : table::DataType::string;
        fields.push_back({field->name(), spillway_type});
    }
    return table::Schema(std::move(fields));
}

std::shared_ptr<arrow::Schema> to_arrow(table::Schema const& schema) {
    ArrowSchema exported;
    table::export_schema(schema, &exported);
    return value_of(arrow::ImportSchema(&exported), "cannot describe a table to Arrow");
}

table::Table to_table(arrow::RecordBatch const& batch, std::string const& file) {
    std::vector<std::shared_ptr<arrow::Array>> columns;
    std::vector<std::shared_ptr<arrow::Field>> fields;
    for (int index = 0; index < batch.num_columns(); ++index) {
        auto column = batch.column(index);
        auto const& field = batch.schema()->field(index);
        auto const type = readable_type(*column->type());
        SPILLWAY_EXPECTS(type != nullptr,
                         "'" << file << "': column '" << field->name() << "' has the type "
                             << column->type()->ToString() << ", which spillway does not read",
                         InvalidArgument);
        if (!column->type()->Equals(*type)) {
            initialize_compute();
            column = value_of(arrow::compute::Cast(*column, type, arrow::compute::CastOptions::Safe()),
                              "'" + file + "': cannot convert column '" + field->name() + "' to " + type->ToString());
        }
        fields.push_back(arrow::field(field->name(), type));
        columns.push_back(std::move(column));
    }
    auto const readable = arrow::RecordBatch::Make(arrow::schema(std::move(fields)), batch.num_rows(), columns);
    ArrowSchema schema;
    ArrowArray array;
    check(arrow::ExportRecordBatch(*readable, &array, &schema), "'" + file + "': cannot hand rows over to spillway");
    return table::import_table(&schema, &array);
}

std::shared_ptr<arrow::RecordBatch> to_record_batch(table::Table table) {
    ArrowSchema schema;
    ArrowArray array;
    table::export_table(std::move(table), &schema, &array);
    return value_of(arrow::ImportRecordBatch(&array, &schema), "cannot hand rows over to Arrow");
}

}  // namespace spillway::io::detail
