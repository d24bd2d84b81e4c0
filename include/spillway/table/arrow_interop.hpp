#pragma once
/// @file
/// Hands tables to Arrow-based tools through the Arrow C Data Interface, and
/// takes tables from them.
///
/// A table travels as a struct array (format `+s`) with one child per column:
///
/// | spillway  | Arrow format | Arrow type              |
/// |-----------|--------------|-------------------------|
/// | `int32`   | `i`          | int32                   |
/// | `int64`   | `l`          | int64                   |
/// | `float64` | `g`          | float64                 |
/// | `date32`  | `tdD`        | date32 (days)           |
/// | `string`  | `u`          | utf8 (32-bit offsets)   |
/// | `boolean` | `b`          | boolean (one bit a value) |
/// | `timestamp_ms`, `_us`, `_ns` | `tsm:`, `tsu:`, `tsn:` | timestamp without a time zone |
/// | `timestamp_ms_utc`, `_us_utc`, `_ns_utc` | `tsm:UTC`, `tsu:UTC`, `tsn:UTC` | timestamp in UTC |
///
/// A timestamp of any other time zone is imported as one in UTC (Arrow
/// stores every zoned timestamp as UTC ticks).

#include <memory>

#include <spillway/table/arrow_c_data.hpp>
#include <spillway/table/table.hpp>

namespace spillway::table {

/// Writes the Arrow schema of a struct whose children are the fields of
/// `schema`, each marked nullable, into `out`. The caller owns `*out` and
/// must call its `release` callback once done (Arrow's rules for moving and
/// releasing apply, children included).
/// @throws InvalidArgument if `out` is null.
void export_schema(Schema const& schema, ArrowSchema* out);

/// Exports `table` without copying its data (but for a boolean column's,
/// which Arrow holds as bits and spillway as bytes): writes its schema into
/// `schema_out` (as `export_schema`) and a struct array whose buffers point
/// into the table's columns into `array_out`. The table moves into the
/// exported array and lives until the array and every child moved out of it
/// are released, in any order, on any thread. The caller owns both
/// structures and must call their `release` callbacks.
/// @throws InvalidArgument if a pointer is null; nothing is written then.
void export_table(Table table, ArrowSchema* schema_out, ArrowArray* array_out);

/// As above, for a table that stays shared: each export keeps `table` alive
/// until its array and every child moved out of it are released, so one
/// table may be exported any number of times without a copy (booleans aside).
/// @throws InvalidArgument if a pointer or `table` is null.
void export_table(std::shared_ptr<Table const> const& table, ArrowSchema* schema_out, ArrowArray* array_out);

/// As `export_table`, without the schema: for a consumer of many tables of
/// one schema, which it has from `export_schema` once.
/// @throws InvalidArgument if `array_out` is null; nothing is written then.
void export_array(Table table, ArrowArray* array_out);

/// The table that an Arrow struct array holds, copied out of its buffers.
/// Takes ownership of both structures: releases them before returning, even
/// when it throws. Honours the array's and its children's `offset`, a
/// `null_count` of -1 (unknown) and absent validity bitmaps.
/// Requires: `array` follows the C Data Interface for `schema`; its buffers
/// are only as trustworthy as its producer, so they are read, not validated
/// byte by byte, except that string offsets must not decrease.
/// @throws InvalidArgument naming the column if the schema is not a struct of
/// supported types (see the file comment), a struct row is null, a column
/// is shorter than the struct, or the structures are null or released.
[[nodiscard]] Table import_table(ArrowSchema* schema, ArrowArray* array);

}  // namespace spillway::table
