#pragma once
/// @file
/// spillway tables to and from Arrow C++ record batches, through the Arrow
/// C Data Interface, and Arrow's errors as spillway's.

#include <filesystem>
#include <memory>
#include <string>

#include <arrow/record_batch.h>
#include <arrow/result.h>
#include <arrow/status.h>
#include <arrow/type.h>

#include <spillway/table/schema.hpp>
#include <spillway/table/table.hpp>

namespace spillway::io::detail {

/// Throws `IoError` with `what` and Arrow's message unless `status` is OK;
/// `CorruptData` for Arrow's invalid-data and serialization errors (a file
/// that is not what it claims to be).
void check(arrow::Status const& status, std::string const& what);

/// The value of `result`, or throws as `check` does.
template <typename T>
T value_of(arrow::Result<T> result, std::string const& what) {
    check(result.status(), what);
    return std::move(result).ValueUnsafe();
}

/// As `check`, for what decodes a file's contents (a footer, a page, an IPC
/// message): Arrow reports one that does not decode as an I/O error without
/// an errno, which is `CorruptData` too; a failed read has an errno and
/// stays `IoError`.
void check_decoded(arrow::Status const& status, std::string const& what);

/// The value of `result`, or throws as `check_decoded` does.
template <typename T>
T decoded_value_of(arrow::Result<T> result, std::string const& what) {
    check_decoded(result.status(), what);
    return std::move(result).ValueUnsafe();
}

/// The spillway schema of `schema`, each type converted as `to_table` does.
/// @throws InvalidArgument naming `file` and the column if a type cannot be read.
table::Schema to_spillway(arrow::Schema const& schema, std::string const& file);

/// The Arrow schema of spillway's `schema` (every field nullable).
std::shared_ptr<arrow::Schema> to_arrow(table::Schema const& schema);

/// The table `batch` holds, copied out, with its columns cast to spillway's
/// types as `TableFileReader` describes.
/// @throws InvalidArgument naming `file` and the column if a type cannot be
///         read, or a value cannot be held by the type it is read as (a
///         uint64 beyond int64, a decimal of more than 15 significant
///         digits, a date64 within a day).
/// @throws CorruptData naming `file` if the batch's buffers are malformed
///         (too small for its rows, or string offsets that decrease or run
///         past their data).
table::Table to_table(arrow::RecordBatch const& batch, std::string const& file);

/// Checks that every string of `table` is UTF-8, as Parquet's and Arrow's
/// strings must be (CSV holds any bytes).
/// @throws InvalidArgument naming `file`, the column and the row of the
///         first string that is not.
void check_utf8(table::Table const& table, std::filesystem::path const& file);

/// Checks that every column name of `schema` is UTF-8, as Parquet's and
/// Arrow's must be.
/// @throws InvalidArgument naming `file` and the first name that is not.
void check_utf8_names(table::Schema const& schema, std::filesystem::path const& file);

/// A record batch over `table`'s buffers, which it keeps alive; no copy.
/// `schema` is `to_arrow(table.schema())`, made once by a caller that hands
/// over many tables of it.
std::shared_ptr<arrow::RecordBatch> to_record_batch(table::Table table, std::shared_ptr<arrow::Schema> const& schema);

}  // namespace spillway::io::detail
