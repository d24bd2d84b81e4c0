#pragma once
/// @file
/// Compression names as the writers take them, as Arrow's codecs.

#include <string>

#include <arrow/util/type_fwd.h>

namespace spillway::io::detail {

/// The codec `name` (`none`, `zstd`, `lz4`, `snappy`, `gzip`) is for a file
/// format that takes `allowed` (a comma-separated list, for the message).
/// `parquet` picks the Parquet flavour of LZ4 (raw blocks) over the frame
/// format the Arrow IPC format uses.
/// @throws InvalidArgument naming the codecs `allowed` otherwise.
arrow::Compression::type compression_of(std::string const& name, std::string const& allowed, bool parquet);

}  // namespace spillway::io::detail
