#include "arrow_capsules.hpp"

#include <string>

#include <spillway/core/error.hpp>
#include <spillway/io/arrow_stream.hpp>
#include <spillway/table/arrow_interop.hpp>

namespace nb = nanobind;

namespace spillway::python {
namespace {

/// Releases a structure of the C Data Interface that a capsule owns, unless
/// its consumer moved it out (which marks it released), then frees it.
template <typename Structure>
void release_capsule(void* pointer) noexcept {
    auto* const structure = static_cast<Structure*>(pointer);
    if (structure->release != nullptr) {
        structure->release(structure);
    }
    delete structure;
}

nb::capsule schema_capsule(table::Schema const& schema) {
    auto owned = std::make_unique<ArrowSchema>();
    table::export_schema(schema, owned.get());
    nb::capsule capsule(owned.get(), "arrow_schema", &release_capsule<ArrowSchema>);
    static_cast<void>(owned.release());  // the capsule's now
    return capsule;
}

}  // namespace

std::unique_ptr<io::TableFileReader> read_arrow_stream(nb::handle data) {
    SPILLWAY_EXPECTS(nb::hasattr(data, "__arrow_c_stream__"),
                     "expected Arrow data (an object with __arrow_c_stream__, such as a pyarrow Table or "
                     "RecordBatchReader, a Polars DataFrame or a DuckDB relation), got "
                         << nb::inst_name(data).c_str(),
                     InvalidArgument);
    nb::object const capsule = data.attr("__arrow_c_stream__")();
    auto* const stream = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule.ptr(), "arrow_array_stream"));
    if (stream == nullptr) {
        PyErr_Clear();
        SPILLWAY_FAIL(nb::inst_name(data).c_str()
                          << ".__arrow_c_stream__() did not return an arrow_array_stream capsule",
                      InvalidArgument);
    }
    return io::open_arrow_stream(stream, std::string(nb::inst_name(data).c_str()));
}

nb::tuple ExportableTable::arrow_c_array(nb::object const& /*requested_schema*/) const {
    auto schema = std::make_unique<ArrowSchema>();
    auto array = std::make_unique<ArrowArray>();
    table::export_table(table_, schema.get(), array.get());
    nb::capsule schema_owner(schema.get(), "arrow_schema", &release_capsule<ArrowSchema>);
    static_cast<void>(schema.release());
    nb::capsule array_owner(array.get(), "arrow_array", &release_capsule<ArrowArray>);
    static_cast<void>(array.release());
    return nb::make_tuple(schema_owner, array_owner);
}

nb::capsule ExportableTable::arrow_c_schema() const { return schema_capsule(table_->schema()); }

}  // namespace spillway::python
