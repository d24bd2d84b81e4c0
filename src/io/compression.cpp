#include "compression.hpp"

#include <string>

#include <arrow/util/compression.h>

#include <spillway/core/error.hpp>

namespace spillway::io::detail {

arrow::Compression::type compression_of(WriteOptions const& options, bool parquet) {
    std::string const allowed = parquet ? "none,zstd,lz4,snappy,gzip" : "none,zstd,lz4";
    auto const& name = options.compression;
    auto const listed = ("," + allowed + ",").find("," + name + ",") != std::string::npos;
    SPILLWAY_EXPECTS(listed,
                     "unknown compression '" << name << "'; " << (parquet ? "Parquet" : "Arrow IPC")
                                             << " files take " << allowed,
                     InvalidArgument);
    auto const codec = name == "none"     ? arrow::Compression::UNCOMPRESSED
                     : name == "lz4"      ? (parquet ? arrow::Compression::LZ4 : arrow::Compression::LZ4_FRAME)
                     : name == "zstd"     ? arrow::Compression::ZSTD
                     : name == "snappy"   ? arrow::Compression::SNAPPY
                                          : arrow::Compression::GZIP;
    if (!options.compression_level) {
        return codec;
    }
    auto const level = *options.compression_level;
    SPILLWAY_EXPECTS(codec != arrow::Compression::UNCOMPRESSED && arrow::util::Codec::SupportsCompressionLevel(codec),
                     "compression '" << name << "' takes no level, but level " << level << " was given",
                     InvalidArgument);
    auto const least = arrow::util::Codec::MinimumCompressionLevel(codec);
    auto const most = arrow::util::Codec::MaximumCompressionLevel(codec);
    SPILLWAY_EXPECTS(least.ok() && most.ok(),
                     "compression '" << name << "': " << (least.ok() ? most : least).status().ToString(),
                     InvalidArgument);
    SPILLWAY_EXPECTS(level >= *least && level <= *most,
                     "compression level " << level << " is out of " << name << "'s range, " << *least << " to "
                                          << *most,
                     InvalidArgument);
    return codec;
}

}  // namespace spillway::io::detail
