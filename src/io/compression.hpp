#pragma once
/// @file
/// Compression names and levels as the writers take them, as Arrow's codecs.

#include <arrow/util/type_fwd.h>

#include <spillway/io/table_file.hpp>

namespace spillway::io::detail {

/// The codec that `options.compression` (`none`, `zstd`, `lz4`, `snappy`,
/// `gzip`) names for Parquet (`parquet`: every one of them, LZ4 as raw
/// blocks) or for Arrow IPC (`none`, `zstd`, `lz4`, as frames), checked
/// with `options.compression_level`.
/// @throws InvalidArgument naming the codecs the format takes, or the levels
///         the codec takes (none for `none` and `snappy`).
arrow::Compression::type compression_of(WriteOptions const& options, bool parquet);

}  // namespace spillway::io::detail
