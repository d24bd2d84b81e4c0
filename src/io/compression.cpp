#include "compression.hpp"

#include <arrow/util/compression.h>

#include <spillway/core/error.hpp>

namespace spillway::io::detail {

arrow::Compression::type compression_of(std::string const& name, std::string const& allowed, bool parquet) {
    auto const listed = ("," + allowed + ",").find("," + name + ",") != std::string::npos;
    SPILLWAY_EXPECTS(listed, "unknown compression '" << name << "'; this format takes " << allowed, InvalidArgument);
    if (name == "none") {
        return arrow::Compression::UNCOMPRESSED;
    }
    if (name == "lz4") {
        return parquet ? arrow::Compression::LZ4 : arrow::Compression::LZ4_FRAME;
    }
    return name == "zstd"     ? arrow::Compression::ZSTD
         : name == "snappy" ? arrow::Compression::SNAPPY
                            : arrow::Compression::GZIP;
}

}  // namespace spillway::io::detail
