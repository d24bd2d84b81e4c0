#pragma once
/// @file
/// Tables taken from any Arrow producer (pyarrow, Polars, DuckDB, ...)
/// through the Arrow C Stream Interface.

#include <memory>
#include <string>

#include <spillway/io/table_file.hpp>
#include <spillway/table/arrow_c_data.hpp>

namespace spillway::io {

/// Reads the record batches of `stream` as tables, in order, one per batch
/// or per `rows_per_read` rows of a larger one (so that a large batch,
/// which its producer holds, is copied a part at a time), copied out of
/// Arrow's buffers and with their columns converted as
/// `TableFileReader` describes. Takes ownership of `*stream` (moving it out,
/// so the caller's structure is marked released) and releases it when the
/// reader is destroyed, or at once if this throws (but for a null or
/// released stream). `rows()` is nothing and `largest_read_bytes()` 0: a
/// stream does not say. Errors name the stream by `description`.
/// @throws InvalidArgument if `stream` is null or released, if its schema
///         holds a type the Arrow library does not know, or naming the
///         column if a column's type cannot be read.
/// @throws IoError with the producer's message if it cannot give its schema;
///         `read` throws it too when the producer fails.
[[nodiscard]] std::unique_ptr<TableFileReader> open_arrow_stream(ArrowArrayStream* stream,
                                                                 std::string description = "Arrow stream");

}  // namespace spillway::io
