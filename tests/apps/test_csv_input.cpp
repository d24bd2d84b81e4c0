#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <spillway/core/error.hpp>

#include <common/error_matchers.hpp>
#include <common/temporary_directory.hpp>

#include "csv_input.hpp"

using namespace spillway;
using namespace spillway::cli;

namespace {

class CsvInputTest : public testing::Test {
  protected:
    std::filesystem::path write(std::string const& name, std::string const& text) {
        auto const path = directory_.path() / name;
        std::ofstream(path) << text;
        return path;
    }

    test::TemporaryDirectory directory_;
};

}  // namespace

TEST_F(CsvInputTest, InfersTheSchemaResolvesKeysByNameOrNumberAndSumsTheSizes) {
    auto const first = write("a.csv", "id,name,price\n1,x,2.5\n");
    auto const second = write("b.csv", "id,name,price\n2,y,3.5\n3,z,4\n");
    auto const input = CsvInput::open({first, second}, {"price", "0"}, Options());
    EXPECT_EQ(input.schema.to_string(), "id:int64, name:string, price:float64");
    EXPECT_EQ(input.keys, (std::vector<std::size_t>{2, 0}));
    EXPECT_EQ(input.bytes, std::filesystem::file_size(first) + std::filesystem::file_size(second));
    EXPECT_TRUE(input.options.header);
}

TEST_F(CsvInputTest, ReadsTblFilesAsTpchWritesThemUnlessOptionsSayOtherwise) {
    auto const tbl = write("lineitem.tbl", "1|a|\n2|b|\n");
    auto const input = CsvInput::open({tbl}, {"column1"}, Options());
    EXPECT_EQ(input.options.delimiter, '|');
    EXPECT_FALSE(input.options.header);
    EXPECT_TRUE(input.options.trailing_delimiter);
    EXPECT_EQ(input.keys, (std::vector<std::size_t>{1}));

    auto const semicolons = write("data.txt", "a;b\n1;2\n");
    Options options;
    options.set("csv_delimiter", ";", OptionSource::command_line);
    EXPECT_EQ(CsvInput::open({semicolons}, {"b"}, options).keys, (std::vector<std::size_t>{1}));
}

TEST_F(CsvInputTest, RefusesMissingInputsBadKeysAndMismatchedHeaders) {
    auto const good = write("a.csv", "id,name\n1,x\n");
    EXPECT_THROW_WITH(CsvInput::open({}, {"id"}, Options()), InvalidArgument, "no input file was given");
    EXPECT_THROW_WITH(CsvInput::open({good, directory_.path() / "nope.csv"}, {"id"}, Options()), InvalidArgument,
                      "nope.csv' does not exist");
    EXPECT_THROW_WITH(CsvInput::open({directory_.path()}, {"id"}, Options()), InvalidArgument,
                      "is not a regular file");
    EXPECT_THROW_WITH(CsvInput::open({good}, {}, Options()), InvalidArgument, "no key column was given");
    EXPECT_THROW_WITH(CsvInput::open({good}, {"key"}, Options()), InvalidArgument, "id:int64, name:string");
    EXPECT_THROW_WITH(CsvInput::open({good}, {"2"}, Options()), InvalidArgument, "id:int64, name:string");
    EXPECT_THROW_WITH(CsvInput::open({good}, {""}, Options()), InvalidArgument, "an empty key column");
    EXPECT_THROW_WITH(CsvInput::open({good}, {"id", "0"}, Options()), InvalidArgument, "given twice");
    auto const wider = write("b.csv", "id,name,extra\n1,x,y\n");
    EXPECT_THROW_WITH(CsvInput::open({good, wider}, {"id"}, Options()), CorruptData, "b.csv:1: the header has 3");
}

TEST_F(CsvInputTest, ABlockSourceReadsEveryFileInOrder) {
    auto const first = write("a.csv", "id\n1\n2\n");
    auto const second = write("b.csv", "id\n3\n");
    auto const input = CsvInput::open({first, second}, {"id"}, Options());
    CsvBlockSource source(input.files, input.options, input.schema);
    std::vector<std::pair<std::size_t, std::string>> blocks;
    while (auto block = source()) {
        blocks.emplace_back(block->file, std::string(block->block.text()));
    }
    EXPECT_EQ(blocks, (std::vector<std::pair<std::size_t, std::string>>{{0, "1\n2\n"}, {1, "3\n"}}));
}
