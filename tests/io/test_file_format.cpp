#include <spillway/io/file_format.hpp>

#include <spillway/core/error.hpp>

#include <common/error_matchers.hpp>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::io;

TEST(FileFormat, NamesParseBackAndExtensionsImplyTheFormat) {
    for (auto const format : {FileFormat::csv, FileFormat::parquet, FileFormat::arrow}) {
        EXPECT_EQ(parse_file_format(to_string(format)), format);
        EXPECT_EQ(format_of(std::string("part") + std::string(extension_of(format))), format);
    }
    EXPECT_EQ(parse_file_format("PARQUET"), FileFormat::parquet);
    EXPECT_EQ(parse_file_format("feather"), FileFormat::arrow);
    EXPECT_EQ(format_of("data/x.PQ"), FileFormat::parquet);
    EXPECT_EQ(format_of("x.feather"), FileFormat::arrow);
    EXPECT_EQ(format_of("x.arrows"), FileFormat::arrow);
    EXPECT_EQ(format_of("lineitem.tbl"), FileFormat::csv);
    EXPECT_EQ(format_of("no_extension"), FileFormat::csv);
    EXPECT_THROW_WITH(static_cast<void>(parse_file_format("orc")), InvalidArgument,
                      "unknown file format 'orc'; the formats are csv, parquet and arrow");
}
