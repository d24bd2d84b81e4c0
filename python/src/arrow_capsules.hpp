#pragma once
/// @file
/// Tables across the Arrow PyCapsule interface: read from any Python object
/// that exports an Arrow C stream, and handed out without a copy to any
/// consumer of an Arrow C array (pyarrow, Polars, DuckDB, ...).

#include <memory>

#include <nanobind/nanobind.h>

#include <spillway/io/table_file.hpp>
#include <spillway/table/table.hpp>

namespace spillway::python {

/// The record batches of `data`, an object with `__arrow_c_stream__` (a
/// pyarrow Table or RecordBatchReader, a Polars DataFrame, a DuckDB
/// relation, ...), as tables (`io::open_arrow_stream`). The caller holds the
/// GIL; the reader's `read` may be called without it (a producer written in
/// Python takes the GIL itself).
/// @throws InvalidArgument if `data` has no `__arrow_c_stream__`, or it does
///         not return an `arrow_array_stream` capsule.
[[nodiscard]] std::unique_ptr<io::TableFileReader> read_arrow_stream(nanobind::handle data);

/// A spillway table that Arrow consumers import without copying its data:
/// `__arrow_c_array__` exports it as a struct array, one child per column
/// (`table::export_table`). `pyarrow.record_batch(t)` takes it.
///
/// Thread safety: as `table::Table`.
class ExportableTable {
  public:
    explicit ExportableTable(table::Table table) : table_(std::make_shared<table::Table const>(std::move(table))) {}

    /// The `(schema, array)` capsules of the Arrow PyCapsule interface. The
    /// table's buffers stay alive until the consumer releases the array.
    /// A `requested_schema` is not honoured: the table is exported as it is,
    /// which the interface allows.
    [[nodiscard]] nanobind::tuple arrow_c_array(nanobind::object const& requested_schema) const;

    /// The `arrow_schema` capsule of the table's schema.
    [[nodiscard]] nanobind::capsule arrow_c_schema() const;

    [[nodiscard]] table::Table const& table() const noexcept { return *table_; }

  private:
    std::shared_ptr<table::Table const> table_;  ///< shared with every export still alive
};

}  // namespace spillway::python
