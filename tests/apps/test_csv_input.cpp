#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
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

TEST_F(CsvInputTest, AFirstFileOfOnlyAHeaderLeavesTheTypesToTheFirstFileWithRows) {
    // As `-i 'parts/*.csv'` reads a partition run's output back, whose first part may be empty.
    auto const empty = write("part-00000.csv", "id,price,at,flag\n");
    auto const reordered = write("part-00001.csv", "flag,at,price,id\ntrue,2024-01-01 00:00:00,0.5,1\n");
    auto const input = CsvInput::open({empty, reordered}, {"price"}, Options());
    EXPECT_EQ(input.schema.to_string(), "id:int64, price:float64, at:timestamp_us, flag:boolean");
    EXPECT_EQ(input.inferred_from, reordered);
    EXPECT_EQ(input.header, "id,price,at,flag\n") << "the first file's header and column order";
    EXPECT_EQ(CsvInput::open({empty}, {"price"}, Options()).schema.to_string(),
              "id:string, price:string, at:string, flag:string");
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
    EXPECT_THROW_WITH(CsvInput::open({good}, {"2"}, Options()), InvalidArgument,
                      "there is no column number 2: the 2 columns, numbered from 0, are id:int64, name:string");
    EXPECT_THROW_WITH(CsvInput::open({good}, {""}, Options()), InvalidArgument, "an empty key column");
    EXPECT_THROW_WITH(CsvInput::open({good}, {"id", "0"}, Options()), InvalidArgument, "given twice");
    auto const empty = write("empty.csv", "");
    EXPECT_THROW_WITH(CsvInput::open({empty}, {"id"}, Options()), InvalidArgument,
                      "empty.csv' is empty: it has no header and no rows");
}

TEST_F(CsvInputTest, MatchesTheColumnsOfEveryFileByName) {
    auto const first = write("a.csv", "id,name\n1,x\n");
    auto const swapped = write("b.csv", "name,id\n\"y,z\",2\n");
    auto const input = CsvInput::open({first, swapped}, {"id"}, Options());
    EXPECT_EQ(input.field_orders, (std::vector<std::vector<std::size_t>>{{}, {1, 0}}));
    EXPECT_EQ(input.file_schema(1).to_string(), "name:string, id:int64");
    EXPECT_EQ(input.file_keys(1), (std::vector<std::size_t>{1}));
    EXPECT_EQ(input.header, "id,name\n");

    CsvBlockSource source(input);
    static_cast<void>(source());
    auto const second = source();
    ASSERT_TRUE(second.has_value());
    auto const rows = input.parse_keys(second->file, second->block);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows.row(0), "2,\"y,z\"\n") << "written in the first file's column order";
    EXPECT_EQ(rows.columns.column(0).values<std::int64_t>()[0], 2);

    auto const wider = write("c.csv", "id,name,extra\n1,x,y\n");
    EXPECT_THROW_WITH(CsvInput::open({first, wider}, {"id"}, Options()), CorruptData,
                      "'" + wider.string() + "' has a column 'extra', which '" + first.string() + "' does not have");
    auto const renamed = write("d.csv", "id,label\n1,x\n");
    EXPECT_THROW_WITH(CsvInput::open({first, renamed}, {"id"}, Options()), CorruptData,
                      "'" + renamed.string() + "' has no column 'name', which '" + first.string() + "' has");
}

TEST_F(CsvInputTest, DeclaredTypesWinOverInference) {
    auto const file = write("a.csv", "id,day,name\n1,2024-01-02,x\n");
    auto const input = CsvInput::open({file}, {"id"}, Options(), {"id:string", "day:date32"});
    EXPECT_EQ(input.schema.to_string(), "id:string, day:date32, name:string");
    EXPECT_EQ(input.declared, (std::vector<bool>{true, true, false}));
    EXPECT_THROW_WITH(CsvInput::open({file}, {"id"}, Options(), {"nope:int64"}), InvalidArgument,
                      "--schema names column 'nope', which the input does not have; its columns are: id:int64");
    EXPECT_THROW_WITH(CsvInput::open({file}, {"id"}, Options(), {"id"}), InvalidArgument,
                      "--schema takes column:type entries");
    EXPECT_THROW_WITH(CsvInput::open({file}, {"id"}, Options(), {"id:integer"}), InvalidArgument,
                      "--schema id:integer: unknown column type 'integer'; the types are int32");
    EXPECT_THROW_WITH(CsvInput::open({file}, {"id"}, Options(), {"id:int64", "id:string"}), InvalidArgument,
                      "--schema gives column 'id' twice");
}

TEST_F(CsvInputTest, AValueThatDoesNotParseAsItsInferredTypeNamesTheFlagsThatFixIt) {
    std::string text = "id,name\n";
    for (int row = 0; row < 20; ++row) {
        text += std::to_string(row) + ",x\n";
    }
    text += "unknown,y\n";
    auto const file = write("late.csv", text);
    Options options;
    options.set("csv_infer_rows", "10", OptionSource::command_line);
    auto const inferred = CsvInput::open({file}, {"id"}, options);
    auto const parse_all = [](CsvInput const& input) {
        CsvBlockSource source(input);
        while (auto block = source()) {
            static_cast<void>(input.parse_keys(block->file, block->block));
        }
    };
    EXPECT_THROW_WITH(parse_all(inferred), CorruptData,
                      "late.csv:22: column 'id': cannot parse 'unknown' as int64: the type was inferred from the first "
                      "10 rows of '" + file.string() + "'; declare it with --schema id:string");
    EXPECT_THROW_WITH(parse_all(inferred), CorruptData, "or infer from more rows with --infer-rows");
    auto const declared = CsvInput::open({file}, {"id"}, options, {"id:int64"});
    try {
        parse_all(declared);
        ADD_FAILURE() << "a declared type that does not fit is an error";
    } catch (CorruptData const& error) {
        EXPECT_THAT(error.what(), testing::Not(testing::HasSubstr("--schema"))) << "the user declared it";
    }
    EXPECT_NO_THROW(parse_all(CsvInput::open({file}, {"id"}, options, {"id:string"})));
    // A first file of fewer rows than --infer-rows was read whole: the
    // message counts its rows and does not offer more of them.
    auto const short_first = write("short.csv", "id,name\n1,a\n2,b\n3,c\n");
    auto const two_files = CsvInput::open({short_first, file}, {"id"}, options);
    EXPECT_EQ(two_files.inferred_rows, 3u);
    try {
        parse_all(two_files);
        ADD_FAILURE() << "'unknown' is no int64";
    } catch (CorruptData const& error) {
        EXPECT_THAT(error.what(), testing::HasSubstr("the type was inferred from the first 3 rows of '"
                                                     + short_first.string() + "'; declare it with --schema id:string"));
        EXPECT_THAT(error.what(), testing::Not(testing::HasSubstr("--infer-rows")));
    }
}

TEST_F(CsvInputTest, ABlockSourceReadsEveryFileInOrder) {
    auto const first = write("a.csv", "id\n1\n2\n");
    auto const second = write("b.csv", "id\n3\n");
    auto const input = CsvInput::open({first, second}, {"id"}, Options());
    CsvBlockSource source(input);
    std::vector<std::pair<std::size_t, std::string>> blocks;
    while (auto block = source()) {
        blocks.emplace_back(block->file, std::string(block->block.text()));
    }
    EXPECT_EQ(blocks, (std::vector<std::pair<std::size_t, std::string>>{{0, "1\n2\n"}, {1, "3\n"}}));
}
