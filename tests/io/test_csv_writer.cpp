#include <spillway/io/csv_writer.hpp>

#include <spillway/io/csv_reader.hpp>

#include <fstream>
#include <sstream>

#include <spillway/table/date32.hpp>
#include <spillway/table/table_builder.hpp>

#include <common/error_matchers.hpp>
#include <common/temporary_directory.hpp>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::io;
using namespace spillway::table;

namespace {

Table sample() {
    TableBuilder builder(Schema({{"id", DataType::int32},
                                 {"big", DataType::int64},
                                 {"price", DataType::float64},
                                 {"day", DataType::date32},
                                 {"note", DataType::string}}));
    builder.column(0).append(std::int32_t{-1});
    builder.column(1).append(std::int64_t{1} << 40);
    builder.column(2).append(0.1);
    builder.column(3).append(to_date32({1998, 12, 1}));
    builder.column(4).append("a \"quoted\", line\nbreak");
    builder.column(0).append_null();
    builder.column(1).append_null();
    builder.column(2).append(1e300);
    builder.column(3).append_null();
    builder.column(4).append("");
    return builder.finish();
}

std::string contents(std::filesystem::path const& path) {
    std::ostringstream text;
    text << std::ifstream(path, std::ios::binary).rdbuf();
    return text.str();
}

}  // namespace

TEST(CsvWriter, FormatsValuesNullsAndQuotesOnlyWhereNeeded) {
    std::string out;
    append_csv_header(sample().schema(), CsvOptions(), out);
    append_csv_rows(sample(), CsvOptions(), out);
    EXPECT_EQ(out,
              "id,big,price,day,note\n"
              "-1,1099511627776,0.1,1998-12-01,\"a \"\"quoted\"\", line\nbreak\"\n"
              ",,1e+300,,\"\"\n");
}

TEST(CsvWriter, WritesANegativeZeroAsANumberThatInferenceReadsBackAsOne) {
    TableBuilder builder(Schema({{"x", DataType::float64}}));
    for (double const value : {-0.0, 0.0, 0.5, -2.0}) {
        builder.column(0).append(value);
    }
    std::string out;
    append_csv_rows(builder.finish(), CsvOptions(), out);
    EXPECT_EQ(out, "-0.0\n0\n0.5\n-2\n") << "-0 would make the column text, its keys other keys";
}

TEST(CsvWriter, WritesTblWithATrailingDelimiterAndNoQuotes) {
    TableBuilder builder(Schema({{"k", DataType::int64}, {"v", DataType::string}}));
    builder.column(0).append(std::int64_t{7});
    builder.column(1).append("a, b");
    std::string out;
    append_csv_rows(builder.finish(), CsvOptions::tbl(), out);
    EXPECT_EQ(out, "7|a, b|\n");
}

TEST(CsvWriter, RefusesAStringThatNeedsQuotesWhenQuotingIsOff) {
    auto options = CsvOptions::tbl();
    options.delimiter = ',';
    std::string out = "kept\n";
    EXPECT_THROW_WITH(append_csv_rows(sample(), options, out), InvalidArgument,
                      "cannot be written without quoting (csv_quote)");
    EXPECT_EQ(out, "kept\n") << "no part of a row is left for a writer to flush";
}

TEST(CsvWriter, WritesTheHeaderTablesAndRawRowsToAFile) {
    spillway::test::TemporaryDirectory directory;
    auto const path = directory.path() / "out.csv";
    CsvWriter writer(path, CsvOptions(), sample().schema());
    writer.write(sample().slice(0, 1));
    writer.write_rows("9,9,9,2000-01-01,raw\n");
    writer.close();
    auto const text = contents(path);
    EXPECT_EQ(text.substr(0, 22), "id,big,price,day,note\n");
    EXPECT_TRUE(text.ends_with("\n9,9,9,2000-01-01,raw\n"));
    EXPECT_EQ(writer.bytes_written(), text.size());
    EXPECT_THROW_WITH(writer.write_rows("x\n"), InvalidArgument, "closed CSV file");
}

TEST(CsvWriter, QuotesAStringThatWouldBeginAFileUnreadAsTextSoThatAFileWithoutHeaderReadsBack) {
    spillway::test::TemporaryDirectory directory;
    CsvOptions options;
    options.header = false;
    Schema const schema({{"note", DataType::string}});
    // A byte order mark the reader would drop, and signatures it would refuse: each first in its file.
    for (std::string_view const first :
         {std::string_view("\xef\xbb\xbfmarked"), std::string_view("PK\x03\x04zip"), std::string_view("\x1f\x8bgz"),
          std::string_view("ARROW1\0\0x", 9)}) {
        TableBuilder builder(schema);
        builder.column(0).append(first);
        builder.column(0).append(std::string_view("plain"));
        auto const rows = builder.finish();
        auto const path = directory.path() / "first.csv";
        CsvWriter writer(path, options, schema);
        writer.write(rows.slice(0, rows.num_rows()));
        writer.close();
        CsvReader reader(path, options, schema);
        auto const read = reader.read();
        ASSERT_TRUE(read.has_value());
        EXPECT_EQ(*read, rows) << contents(path);
    }
}

TEST(CsvWriter, RowsWrittenVerbatimQuoteTheFirstFieldOfAFileWithoutHeaderThatWouldBeUnreadAsText) {
    spillway::test::TemporaryDirectory directory;
    CsvOptions options;
    options.header = false;
    Schema const schema({{"note", DataType::string}, {"n", DataType::int64}});
    for (std::string_view const rows :
         {std::string_view("\xef\xbb\xbfmarked,1\nplain,2\n"), std::string_view("PK\x03\x04zip,3\n")}) {
        auto const path = directory.path() / "verbatim.csv";
        CsvWriter writer(path, options, schema);
        writer.write_rows(rows);
        writer.close();
        EXPECT_EQ(contents(path).front(), '"') << contents(path);
        auto const first_field = rows.substr(0, rows.find(','));
        CsvReader reader(path, options, schema);
        auto const read = reader.read();
        ASSERT_TRUE(read.has_value());
        EXPECT_EQ(read->column(0).string(0), first_field);
        EXPECT_EQ(writer.bytes_written(), contents(path).size());
    }
}

TEST(CsvWriter, KeepsRowsInOrderWhetherTheyAreBufferedOrWrittenStraightThrough) {
    spillway::test::TemporaryDirectory directory;
    auto const path = directory.path() / "out.csv";
    CsvWriter writer(path, CsvOptions::tbl(), sample().schema(), 8);
    std::string expected;
    for (std::string const rows : {"1|\n", "22|\n", "long row|\n", "3|\n", "x|\ny|\nz|\n", "4|\n"}) {
        writer.write_rows(rows);
        expected += rows;
    }
    writer.close();
    EXPECT_EQ(contents(path), expected);
    EXPECT_EQ(writer.bytes_written(), expected.size());
}

TEST(CsvWriter, RefusesABufferOfNoBytes) {
    spillway::test::TemporaryDirectory directory;
    EXPECT_THROW_WITH(CsvWriter(directory.path() / "out.csv", CsvOptions(), Schema(), 0), InvalidArgument,
                      "buffer of at least 1 byte");
}

TEST(CsvWriter, ACreateFailureIsAnIoErrorNamingThePath) {
    spillway::test::TemporaryDirectory directory;
    auto const regular_file = directory.path() / "file";
    std::ofstream(regular_file) << "x";
    // A path under a regular file fails with ENOTDIR, even for root.
    EXPECT_THROW_WITH(CsvWriter(regular_file / "out.csv", CsvOptions(), Schema()), IoError, "file/out.csv");
}
