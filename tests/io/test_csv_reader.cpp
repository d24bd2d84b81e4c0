#include <spillway/io/csv_reader.hpp>
#include <spillway/io/csv_writer.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <spillway/table/date32.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table/row_hash.hpp>
#include <spillway/table/table_builder.hpp>
#include <spillway/table/tpch_generator.hpp>

#include <common/error_matchers.hpp>
#include <common/temporary_directory.hpp>

#include <gtest/gtest.h>

#include "random_table.hpp"

using namespace spillway;
using namespace spillway::io;
using namespace spillway::table;
using spillway::table::test::random_table;

namespace {

class CsvReaderTest : public ::testing::Test {
  protected:
    /// Writes `text` to a file named `name` and returns its path.
    std::filesystem::path file(std::string const& name, std::string_view text) {
        auto const path = directory_.path() / name;
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }

    /// Every row of the file, parsed.
    static Table read_all(CsvReader& reader) {
        std::vector<Table> tables;
        while (auto table = reader.read()) {
            tables.push_back(std::move(*table));
        }
        return tables.empty() ? TableBuilder(reader.schema()).finish() : Table::concatenate(tables);
    }

    static Table read_all(std::filesystem::path const& path, CsvOptions const& options,
                          std::optional<Schema> schema = std::nullopt) {
        CsvReader reader(path, options, std::move(schema));
        return read_all(reader);
    }

    spillway::test::TemporaryDirectory directory_;
};

}  // namespace

TEST_F(CsvReaderTest, ReadsTheHeaderAndInfersColumnTypes) {
    auto const path = file("typed.csv",
                           "id,price,day,name,count\n"
                           "1,2.5,2024-01-02,apple,7\n"
                           "2,,2024-02-29,\"banana, ripe\",8.25\n"
                           "-3,4,1970-01-01,,9\n");
    CsvReader reader(path, CsvOptions());
    EXPECT_EQ(reader.schema().to_string(), "id:int64, price:float64, day:date32, name:string, count:float64");
    auto const table = read_all(reader);
    ASSERT_EQ(table.num_rows(), 3u);
    EXPECT_EQ(table.column("id").values<std::int64_t>()[2], -3);
    EXPECT_TRUE(table.column("price").is_null(1));
    EXPECT_EQ(table.column("price").values<double>()[2], 4.0);
    EXPECT_EQ(table.column("day").values<std::int32_t>()[1], to_date32({2024, 2, 29}));
    EXPECT_EQ(table.column("name").string(1), "banana, ripe");
    EXPECT_TRUE(table.column("name").is_null(2));
}

TEST_F(CsvReaderTest, QuotedFieldsHoldDelimitersLineBreaksAndDoubledQuotes) {
    auto const path = file("quoted.csv",
                           "a,b,c,d\n"
                           "\"x,y\",\"line one\nline two\",\"say \"\"hi\"\"\",\"\"\n"
                           "plain,\"\",\"\"\"\",\n");
    auto const table = read_all(path, CsvOptions());
    ASSERT_EQ(table.num_rows(), 2u);
    EXPECT_EQ(table.column("a").string(0), "x,y");
    EXPECT_EQ(table.column("b").string(0), "line one\nline two");
    EXPECT_EQ(table.column("c").string(0), "say \"hi\"");
    EXPECT_FALSE(table.column("d").is_null(0));
    EXPECT_EQ(table.column("d").string(0), "");
    EXPECT_EQ(table.column("b").string(1), "");
    EXPECT_EQ(table.column("c").string(1), "\"");
    EXPECT_TRUE(table.column("d").is_null(1));
}

TEST_F(CsvReaderTest, AcceptsCrlfLineBreaks) {
    auto const path = file("crlf.csv", "id,name\r\n1,x\r\n2,\"q\"\r\n3,\r\n");
    CsvReader reader(path, CsvOptions());
    EXPECT_EQ(reader.schema().to_string(), "id:int64, name:string");
    auto const table = read_all(reader);
    ASSERT_EQ(table.num_rows(), 3u);
    EXPECT_EQ(table.column("name").string(0), "x");
    EXPECT_EQ(table.column("name").string(1), "q");
    EXPECT_TRUE(table.column("name").is_null(2));
    EXPECT_EQ(table.column("id").values<std::int64_t>()[2], 3);
}

TEST_F(CsvReaderTest, AnEmptyFileHasNoRows) {
    auto const empty = file("empty.csv", "");
    CsvReader inferred(empty, CsvOptions());
    EXPECT_EQ(inferred.schema().size(), 0u);
    EXPECT_FALSE(inferred.read_block().has_value());

    Schema const schema({{"id", DataType::int64}});
    CsvReader given(empty, CsvOptions(), schema);
    EXPECT_EQ(given.schema(), schema);
    EXPECT_FALSE(given.read().has_value());

    CsvReader header_only(file("header.csv", "id,name\n"), CsvOptions());
    EXPECT_EQ(header_only.schema().to_string(), "id:string, name:string");
    EXPECT_FALSE(header_only.read().has_value());

    CsvOptions without_header;
    without_header.header = false;
    for (auto const& options : {CsvOptions(), without_header}) {
        CsvReader mark_only(file("mark.csv", "\xef\xbb\xbf"), options);
        EXPECT_EQ(mark_only.schema().size(), 0u) << "a byte order mark alone is an empty file";
        EXPECT_FALSE(mark_only.read_block().has_value());
    }
}

TEST_F(CsvReaderTest, TwoColumnsOfOneNameAreCorruptDataUnlessASchemaNamesThem) {
    EXPECT_THROW_WITH(CsvReader(file("twice.csv", "a,b,a\n1,2,3\n"), CsvOptions()), CorruptData,
                      "twice.csv:1: two columns are named 'a'");
    EXPECT_THROW_WITH(CsvReader(file("unnamed.csv", "a,,\n1,2,3\n"), CsvOptions()), CorruptData,
                      "unnamed.csv:1: two columns are named ''");
    Schema const schema({{"a", DataType::int64}, {"b", DataType::int64}, {"c", DataType::int64}});
    EXPECT_EQ(read_all(file("twice.csv", "a,b,a\n1,2,3\n"), CsvOptions(), schema).column(2).values<std::int64_t>()[0],
              3);
}

TEST_F(CsvReaderTest, AnEmptyHeaderLineIsRefusedRatherThanReadAsAColumnWithoutAName) {
    for (auto const* text : {"\n1,2\n", "\r\n1,2\r\n", "\xef\xbb\xbf\n1,2\n"}) {
        EXPECT_THROW_WITH(CsvReader(file("blank.csv", text), CsvOptions()), CorruptData,
                          "blank.csv:1: the header line is empty");
    }
    CsvOptions without_header;
    without_header.header = false;
    EXPECT_EQ(CsvReader(file("blank.csv", "\n1,2\n"), without_header).schema().size(), 1u)
        << "without a header, an empty first line is a row of one empty field";
}

TEST_F(CsvReaderTest, ALastRowWithoutALineBreakGetsOne) {
    CsvReader reader(file("unterminated.csv", "a\n1\n2"), CsvOptions());
    auto const block = reader.read_block();
    ASSERT_TRUE(block.has_value());
    EXPECT_EQ(block->text(), "1\n2\n");
    EXPECT_EQ(block->first_line(), 2u);
    EXPECT_EQ(block->parse().num_rows(), 2u);
    EXPECT_FALSE(reader.read_block().has_value());
}

TEST_F(CsvReaderTest, ReadsTpchTblFiles) {
    auto const path = file("orders.tbl", "1|37|O|131251.81|1996-01-02|\n2|79|F|40183.29|1996-12-01|\n");
    CsvReader reader(path, CsvOptions::tbl());
    EXPECT_EQ(reader.schema().to_string(), "column0:int64, column1:int64, column2:string, column3:float64, column4:date32");
    auto const table = read_all(reader);
    ASSERT_EQ(table.num_rows(), 2u);
    EXPECT_EQ(table.column(3).values<double>()[1], 40183.29);
}

TEST_F(CsvReaderTest, TpchLineitemRoundTripsThroughTbl) {
    auto const lineitem = TpchGenerator(0.001, 3).lineitem(0);
    auto const path = directory_.path() / "lineitem.tbl";
    CsvWriter writer(path, CsvOptions::tbl(), lineitem.schema());
    writer.write(lineitem);
    writer.close();
    EXPECT_EQ(read_all(path, CsvOptions::tbl(), lineitem.schema()), lineitem);
}

TEST_F(CsvReaderTest, TablesOfAnyBytesRoundTripThroughCsv) {
    for (char const delimiter : {',', '\t', ';'}) {
        auto const table = random_table(700, static_cast<std::uint64_t>(delimiter), 0.2);
        CsvOptions options;
        options.delimiter = delimiter;
        options.chunk_bytes = 4096;
        auto const path = directory_.path() / "random.csv";
        CsvWriter writer(path, options, table.schema());
        writer.write(table);
        writer.close();
        EXPECT_EQ(read_all(path, options, table.schema()), table) << "delimiter " << int{delimiter};
    }
}

TEST_F(CsvReaderTest, StreamsBoundedBlocksOfWholeRows) {
    std::string text = "n,quoted\n";
    for (int row = 0; row < 3000; ++row) {
        text += std::to_string(row) + (row % 7 == 0 ? ",\"multi\nline " + std::to_string(row) + "\"\n" : ",plain\n");
    }
    CsvOptions options;
    options.chunk_bytes = 1000;
    CsvReader reader(file("stream.csv", text), options);
    std::uint64_t expected_line = 2;
    std::int64_t expected_row = 0;
    std::size_t blocks = 0;
    while (auto block = reader.read_block()) {
        ++blocks;
        EXPECT_LE(block->text().size(), options.chunk_bytes);
        EXPECT_EQ(block->text().back(), '\n');
        EXPECT_EQ(block->first_line(), expected_line);
        expected_line += static_cast<std::uint64_t>(std::ranges::count(block->text(), '\n'));
        auto const table = block->parse();
        for (std::size_t row = 0; row < table.num_rows(); ++row, ++expected_row) {
            ASSERT_EQ(table.column(0).values<std::int64_t>()[row], expected_row);
            ASSERT_EQ(table.column(1).string(row), expected_row % 7 == 0 ? "multi\nline " + std::to_string(expected_row) : "plain");
        }
    }
    EXPECT_EQ(expected_row, 3000);
    EXPECT_GT(blocks, 20u);
}

TEST_F(CsvReaderTest, ParseColumnsGivesTheSelectedColumnsAndEachRowsBytes) {
    auto const path = file("keys.csv", "a,b,c\n1,x,10\n2,\"y,z\",20\n3,w,30\n");
    CsvReader reader(path, CsvOptions());
    auto const block = reader.read_block();
    ASSERT_TRUE(block.has_value());
    std::vector<std::size_t> const columns{2, 0};
    auto const rows = block->parse_columns(columns);
    EXPECT_EQ(rows.columns.schema().to_string(), "c:int64, a:int64");
    EXPECT_EQ(rows.columns.column(0).values<std::int64_t>()[1], 20);
    EXPECT_EQ(rows.columns.column(1).values<std::int64_t>()[2], 3);
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows.row(0), "1,x,10\n");
    EXPECT_EQ(rows.row(1), "2,\"y,z\",20\n");
    EXPECT_EQ(rows.row(2), "3,w,30\n");
    EXPECT_EQ(rows.text, block->text());

    std::vector<std::size_t> const first_only{0};
    EXPECT_EQ(block->parse_columns(first_only).columns.column(0).values<std::int64_t>()[0], 1);
    std::vector<std::size_t> const repeated{0, 0};
    std::vector<std::size_t> const missing{3};
    EXPECT_THROW_WITH(static_cast<void>(block->parse_columns(repeated)), InvalidArgument, "selected twice");
    EXPECT_THROW_WITH(static_cast<void>(block->parse_columns(missing)), InvalidArgument,
                      "column 3 of a CSV file with 3 columns");
}

TEST_F(CsvReaderTest, RowsSplitByKeyHashAndChecksumsVerifyARepartition) {
    auto const lineitem = TpchGenerator(0.002, 9).lineitem(0);
    auto const input = directory_.path() / "input.csv";
    CsvWriter input_writer(input, CsvOptions(), lineitem.schema());
    input_writer.write(lineitem);
    input_writer.close();

    constexpr std::uint32_t partitions = 5;
    std::vector<std::size_t> const key{0};
    CsvOptions options;
    options.chunk_bytes = 8192;
    std::vector<std::unique_ptr<CsvWriter>> outputs;
    for (std::uint32_t partition = 0; partition < partitions; ++partition) {
        outputs.push_back(std::make_unique<CsvWriter>(directory_.path() / ("part" + std::to_string(partition) + ".csv"),
                                                      options, lineitem.schema()));
    }
    TableChecksum input_checksum;
    CsvReader reader(input, options, lineitem.schema());
    while (auto block = reader.read_block()) {
        auto const rows = block->parse_columns(key);
        input_checksum += rows.checksum();
        auto const parts = rows.split(partition_rows(rows.columns, std::vector<std::size_t>{0}, partitions), partitions);
        for (std::uint32_t partition = 0; partition < partitions; ++partition) {
            outputs[partition]->write_rows(parts[partition]);
        }
    }
    EXPECT_EQ(input_checksum.rows, lineitem.num_rows());

    TableChecksum output_checksum;
    std::vector<Table> output_tables;
    for (std::uint32_t partition = 0; partition < partitions; ++partition) {
        outputs[partition]->close();
        CsvReader part(directory_.path() / ("part" + std::to_string(partition) + ".csv"), options, lineitem.schema());
        while (auto block = part.read_block()) {
            auto const rows = block->parse_columns(key);
            output_checksum += rows.checksum();
            for (auto const id : partition_rows(rows.columns, std::vector<std::size_t>{0}, partitions)) {
                ASSERT_EQ(id, partition);
            }
            output_tables.push_back(block->parse());
        }
    }
    EXPECT_EQ(output_checksum, input_checksum);
    EXPECT_EQ(TableChecksum::of(Table::concatenate(output_tables)), TableChecksum::of(lineitem));
}

TEST_F(CsvReaderTest, RowChecksumsIgnoreTheLineBreakStyle) {
    CsvReader unix_style(file("lf.csv", "a,b\n1,x\n2,y\n"), CsvOptions());
    CsvReader windows_style(file("crlf.csv", "a,b\r\n2,y\r\n1,x\r\n"), CsvOptions());
    std::vector<std::size_t> const key{0};
    auto const lf = unix_style.read_block();
    auto const crlf = windows_style.read_block();
    EXPECT_EQ(lf->parse_columns(key).checksum(), crlf->parse_columns(key).checksum());
    auto const rows = lf->parse_columns(key);
    std::vector<std::uint32_t> const bad_ids{0, 3};
    EXPECT_THROW_WITH(static_cast<void>(rows.split(bad_ids, 3)), InvalidArgument, "partition id 3 is out of range");
}

TEST_F(CsvReaderTest, ParseColumnsChecksTheFieldCountOfEveryRow) {
    Schema const schema({{"k", DataType::int64}, {"v", DataType::string}});
    std::vector<std::size_t> const key{0};
    auto const parse_keys = [&](std::string const& name, std::string const& text, CsvOptions const& options) {
        CsvReader reader(file(name, text), options, schema);
        return reader.read_block()->parse_columns(key);
    };
    EXPECT_THROW_WITH(static_cast<void>(parse_keys("long.csv", "k,v\n1,a\n2,b,extra\n", CsvOptions())), CorruptData,
                      "long.csv:3: expected 2 fields, found 3");
    EXPECT_THROW_WITH(static_cast<void>(parse_keys("short.csv", "k,v\n1,a\n2\n", CsvOptions())), CorruptData,
                      "short.csv:3: expected 2 fields, found 1");
    EXPECT_THROW_WITH(static_cast<void>(parse_keys("crlf.csv", "k,v\r\n1,a\r\n2,b,\r\n", CsvOptions())),
                      CorruptData, "crlf.csv:3: expected 2 fields, found 3");
    // A row with a wrong field count is reported as such, even where a value
    // in it does not parse.
    EXPECT_THROW_WITH(static_cast<void>(parse_keys("shifted.csv", "k,v\nx,y,z\n", CsvOptions())), CorruptData,
                      "shifted.csv:2: expected 2 fields, found 3");
    EXPECT_THROW_WITH(static_cast<void>(parse_keys("value.csv", "k,v\nx,y\n", CsvOptions())), CsvValueError,
                      "value.csv:2: column 'k': cannot parse 'x' as int64");
    try {
        static_cast<void>(parse_keys("named.csv", "k,v\nx,y\n", CsvOptions()));
    } catch (CsvValueError const& error) {
        EXPECT_EQ(error.column(), "k");
    }

    auto tbl = CsvOptions::tbl();
    Schema const two({{"a", DataType::int64}, {"b", DataType::string}});
    CsvReader reader(file("rows.tbl", "1|x|\n2|y\n"), tbl, two);
    EXPECT_THROW_WITH(static_cast<void>(reader.read_block()->parse_columns(key)), CorruptData,
                      "rows.tbl:2: expected 2 fields and a trailing '|', found 2");
}

TEST_F(CsvReaderTest, AWrongFieldCountFarPastTheInferredRowsIsStillAnError) {
    std::string text = "k,v\n";
    for (int row = 0; row < 3000; ++row) {
        text += std::to_string(row) + ",x\n";
    }
    text += "3000,x,extra\n";
    CsvReader reader(file("late.csv", text), CsvOptions());
    std::vector<std::size_t> const key{0};
    EXPECT_THROW_WITH(static_cast<void>(reader.read_block()->parse_columns(key)), CorruptData,
                      "late.csv:3002: expected 2 fields, found 3");
}

TEST_F(CsvReaderTest, InfersFromTheFirstInferRowsRowsHoweverManyChunksTheyTake) {
    // 300 rows of about 8 bytes, read 64 bytes at a time: the text on row
    // 150 makes the column a string only if inference reads past the first
    // chunk; reading then starts again at the first row.
    std::string text = "k,v\n";
    for (int row = 1; row < 300; ++row) {
        text += std::to_string(row) + "," + (row == 150 ? std::string("abc") : std::to_string(row * 7)) + "\n";
    }
    auto const path = file("wide.csv", text);
    CsvOptions options;
    options.chunk_bytes = 64;
    CsvReader reader(path, options);
    EXPECT_EQ(reader.schema().to_string(), "k:int64, v:string");
    EXPECT_EQ(reader.inferred_rows(), 299u) << "every row the file has";
    auto const table = read_all(reader);
    ASSERT_EQ(table.num_rows(), 299u);
    EXPECT_EQ(table.column("k").values<std::int64_t>()[0], 1);
    EXPECT_EQ(table.column("v").string(149), "abc");
    EXPECT_EQ(table.column("k").values<std::int64_t>()[298], 299);
    // With fewer rows to infer from, the text is past them, and parsing it
    // names its line.
    options.infer_rows = 100;
    CsvReader fewer(path, options);
    EXPECT_EQ(fewer.schema().to_string(), "k:int64, v:int64");
    EXPECT_EQ(fewer.inferred_rows(), 100u);
    EXPECT_THROW_WITH(static_cast<void>(read_all(fewer)), CorruptData, "wide.csv:151:");
    EXPECT_EQ(CsvReader(path, options, Schema({{"k", DataType::int64}, {"v", DataType::string}})).inferred_rows(), 0u);
}

TEST_F(CsvReaderTest, SkippingBadRowsLeavesOutAndCountsRowsWithTheWrongFieldCount) {
    CsvOptions options;
    options.bad_rows = CsvOptions::BadRows::skip;
    Schema const schema({{"k", DataType::int64}, {"v", DataType::string}});
    CsvReader reader(file("bad.csv", "k,v\n1,a\nx,y,z\n3\n,\n5,\"e,f\"\n"), options, schema);
    auto const block = reader.read_block();
    std::vector<std::size_t> const columns{1, 0};
    auto const rows = block->parse_columns(columns);
    EXPECT_EQ(rows.skipped_rows, 2u);
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows.row(0), "1,a\n");
    EXPECT_EQ(rows.row(1), ",\n");
    EXPECT_EQ(rows.row(2), "5,\"e,f\"\n");
    ASSERT_EQ(rows.columns.num_rows(), 3u);
    EXPECT_EQ(rows.columns.column(1).values<std::int64_t>()[2], 5);
    EXPECT_TRUE(rows.columns.column(0).is_null(1));
    EXPECT_EQ(rows.columns.column(0).string(2), "e,f");
    EXPECT_EQ(block->parse().num_rows(), 3u);

    CsvReader inferring(file("infer.csv", "k,v\n1,a\nx,2.5,extra\n3\n"), options);
    EXPECT_EQ(inferring.schema().to_string(), "k:int64, v:string") << "skipped rows tell nothing about types";
}

TEST_F(CsvReaderTest, ParseColumnsCanRewriteRowsWithTheirFieldsInAnotherOrder) {
    CsvReader reader(file("order.csv", "b,a,c\n\"q,1\",1,z\n2,,\"w\"\r\n"), CsvOptions());
    auto const block = reader.read_block();
    std::vector<std::size_t> const key{1};
    std::vector<std::size_t> const order{1, 0, 2};
    auto rows = block->parse_columns(key, order);
    ASSERT_EQ(rows.size(), 2u);
    auto const moved = std::move(rows);
    EXPECT_EQ(moved.row(0), "1,\"q,1\",z\n");
    EXPECT_EQ(moved.row(1), ",2,\"w\"\r\n");
    EXPECT_EQ(moved.columns.column(0).values<std::int64_t>()[0], 1);
    EXPECT_TRUE(moved.columns.column(0).is_null(1));

    std::vector<std::size_t> const repeated{0, 0, 2};
    std::vector<std::size_t> const short_order{1, 0};
    EXPECT_THROW_WITH(static_cast<void>(block->parse_columns(key, repeated)), InvalidArgument,
                      "must name each of the 3 columns once");
    EXPECT_THROW_WITH(static_cast<void>(block->parse_columns(key, short_order)), InvalidArgument,
                      "must name each of the 3 columns once");

    CsvReader tbl(file("order.tbl", "1|x|\n"), CsvOptions::tbl());
    std::vector<std::size_t> const swap{1, 0};
    EXPECT_EQ(tbl.read_block()->parse_columns(key, swap).row(0), "x|1|\n");
}

TEST_F(CsvReaderTest, SkipsAByteOrderMarkKeepsTheHeaderLineAndRejectsGzip) {
    CsvReader reader(file("bom.csv", "\xef\xbb\xbf\"id\",name\r\n1,x\n"), CsvOptions());
    EXPECT_EQ(reader.schema().to_string(), "id:int64, name:string");
    EXPECT_EQ(reader.header_line(), "\"id\",name\r\n") << "the header as it is in the file";
    EXPECT_EQ(CsvReader(file("none.tbl", "1|x|\n"), CsvOptions::tbl()).header_line(), "");
    EXPECT_THROW_WITH(CsvReader(file("rows.csv.gz", std::string("\x1f\x8b\x08\x00", 4)), CsvOptions()), CorruptData,
                      "rows.csv.gz' is gzip-compressed; decompress it first");
}

TEST_F(CsvReaderTest, AFileThatStartsAsACompressedStreamParquetOrArrowIsRefusedSayingWhichItIs) {
    for (auto const& [start, kind] : {
             std::pair{std::string("\x28\xb5\x2f\xfd\x04\x58", 6), "zstd-compressed; decompress it first"},
             std::pair{std::string("\xfd" "7zXZ\0\0", 8), "xz-compressed"},
             std::pair{std::string("BZh91AY&SY\x01", 11), "bzip2-compressed"},
             std::pair{std::string("PK\x03\x04\x14\0", 6), "a zip archive"},
             std::pair{std::string("PAR1\x15\x04\x15", 7), "a Parquet file, not CSV text; read it as that format"},
             std::pair{std::string("ARROW1\0\0\xff\xff", 10), "an Arrow IPC file, not CSV text"},
             std::pair{std::string("\xff\xff\xff\xff\x78\0", 6), "an Arrow IPC stream, not CSV text"},
         }) {
        EXPECT_THROW_WITH(CsvReader(file("data", start), CsvOptions()), CorruptData, "data' is " + std::string(kind));
    }
    // Text that merely begins with the same letters is text.
    for (auto const* text : {"PAR1,ARROW1\n1,2\n", "BZh9,PK\n1,2\n"}) {
        EXPECT_EQ(CsvReader(file("text.csv", text), CsvOptions()).schema().size(), 2u) << text;
    }
}

TEST_F(CsvReaderTest, AReaderThatFailsAfterOpeningItsFileClosesIt) {
    auto const open_descriptors = [] {
        return std::distance(std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator());
    };
    auto const gzip = file("rows.csv.gz", std::string("\x1f\x8b\x08\x00", 4));
    auto const unclosed_quote = file("header.csv", "id,\"name\n1,x\n");
    auto const mismatch = file("given.csv", "id,name\n1,x\n");
    Schema const one_column({{"id", DataType::int64}});
    auto const before = open_descriptors();
    for (int attempt = 0; attempt < 3; ++attempt) {
        EXPECT_THROW(CsvReader(gzip, CsvOptions()), CorruptData);
        EXPECT_THROW(CsvReader(unclosed_quote, CsvOptions()), CorruptData);
        EXPECT_THROW(CsvReader(mismatch, CsvOptions(), one_column), CorruptData);
    }
    EXPECT_EQ(open_descriptors(), before);
}

TEST_F(CsvReaderTest, AGivenSchemaWinsOverInferenceAndMustMatchTheHeader) {
    auto const path = file("given.csv", "id,name\n1,x\n");
    Schema const schema({{"key", DataType::int32}, {"label", DataType::string}});
    auto const table = read_all(path, CsvOptions(), schema);
    EXPECT_EQ(table.schema(), schema);
    EXPECT_EQ(table.column(0).values<std::int32_t>()[0], 1);
    EXPECT_THROW_WITH(CsvReader(path, CsvOptions(), Schema({{"id", DataType::int64}})), CorruptData,
                      "given.csv:1: the header has 2 columns but the schema has 1");
}

TEST_F(CsvReaderTest, AMalformedLineIsAnErrorNamingTheFileAndLine) {
    Schema const schema({{"id", DataType::int64}, {"name", DataType::string}});
    auto const expect_error = [&](std::string const& name, std::string const& text, std::string const& message,
                                  CsvOptions const& options = CsvOptions()) {
        auto const path = file(name, text);
        EXPECT_THROW_WITH(static_cast<void>(read_all(path, options, schema)), CorruptData, message) << name;
    };
    expect_error("fields.csv", "id,name\n1,a\n2,b\n3\n", "fields.csv:4: expected 2 fields, found 1");
    expect_error("extra.csv", "id,name\n1,a,b\n", "extra.csv:2: expected 2 fields, found 3");
    expect_error("number.csv", "id,name\n1,a\nx1,b\n", "number.csv:3: column 'id': cannot parse 'x1' as int64");
    expect_error("after_multiline.csv", "id,name\n1,\"two\nlines\"\n2,b\nthree,c\n",
                 "after_multiline.csv:5: column 'id': cannot parse 'three' as int64");
    expect_error("unclosed.csv", "id,name\n1,a\n2,\"open\n3,c\n", "unclosed.csv:3: no row ends within");
    expect_error("stray.csv", "id,name\n1,a\"b\n\"\n", "stray.csv:2: a quote inside an unquoted field");
    expect_error("after_quote.csv", "id,name\n1,\"a\"b\n", "after_quote.csv:2: unexpected character after a closing quote");
    expect_error("trailing.tbl", "1|a|\n2|b\n", "trailing.tbl:2: expected 2 fields and a trailing '|', found 2",
                 CsvOptions::tbl());
    expect_error("not_trailing.tbl", "1|a|\n2|b|c\n", "not_trailing.tbl:2: expected 2 fields and a trailing '|', found 3",
                 CsvOptions::tbl());
}

TEST_F(CsvReaderTest, ARowLongerThanTheChunkSizeNamesTheSetting) {
    CsvOptions options;
    options.chunk_bytes = 64;
    auto const path = file("long.csv", "a\nshort\n" + std::string(100, 'x') + "\n");
    CsvReader reader(path, options);
    ASSERT_TRUE(reader.read_block().has_value());
    EXPECT_THROW_WITH(static_cast<void>(reader.read_block()), CorruptData, "long.csv:3: no row ends within 64 bytes");
    EXPECT_THROW_WITH(static_cast<void>(reader.read_block()), CorruptData, "csv_chunk_bytes");
    EXPECT_EQ(reader.inferred_rows(), 1u) << "inference reads on only to the long row";
}

TEST_F(CsvReaderTest, InferenceWidensToTheNarrowestTypeThatHoldsEveryValue) {
    CsvOptions options;
    options.header = false;
    auto const path = file("widen.csv",
                           "1,1,2020-01-01,1,,5\n2,2.5,2020-01-02,2020-01-03,,\"\"\n99999999999,3,2020-01-04,x,,6\n");
    CsvReader reader(path, options);
    EXPECT_EQ(reader.schema().to_string(),
              "column0:int64, column1:float64, column2:date32, column3:string, column4:string, column5:string");
    EXPECT_EQ(read_all(reader).column(5).string(1), "");
    options.infer_rows = 1;
    EXPECT_EQ(CsvReader(path, options).schema().to_string(),
              "column0:int64, column1:int64, column2:date32, column3:int64, column4:string, column5:int64");
}

TEST_F(CsvReaderTest, InfersBooleansAndTimestampsInTheUnitAndZoneTheirTextNeeds) {
    auto const path = file("kinds.csv",
                           "flag,at,fine,zoned,mixed,shouting,digits\n"
                           "true,2024-01-02 03:04:05,2024-01-02 03:04:05.123456789,2024-01-02T03:04:05Z,"
                           "2024-01-02 03:04:05Z,TRUE,1\n"
                           "false,2024-01-02T03:04:05.5,,2024-01-02 04:04:05+01:00,2024-01-02 03:04:05,False,0\n"
                           ",,2024-01-02 03:04:05,,,,\n");
    CsvReader reader(path, CsvOptions());
    EXPECT_EQ(reader.schema().to_string(),
              "flag:boolean, at:timestamp_us, fine:timestamp_ns, zoned:timestamp_us_utc, mixed:string, "
              "shouting:boolean, digits:int64");
    auto const table = read_all(reader);
    ASSERT_EQ(table.num_rows(), 3u);
    EXPECT_EQ(table.column("flag").values<std::uint8_t>()[0], 1);
    EXPECT_EQ(table.column("flag").values<std::uint8_t>()[1], 0);
    EXPECT_TRUE(table.column("flag").is_null(2));
    EXPECT_EQ(table.column("shouting").values<std::uint8_t>()[0], 1);  // as R writes it
    EXPECT_EQ(table.column("shouting").values<std::uint8_t>()[1], 0);  // as pandas does
    std::int64_t const seconds = (to_date32({2024, 1, 2}) * std::int64_t{86'400}) + 3 * 3600 + 4 * 60 + 5;
    EXPECT_EQ(table.column("at").values<std::int64_t>()[1], seconds * 1'000'000 + 500'000);
    EXPECT_EQ(table.column("fine").values<std::int64_t>()[0], seconds * 1'000'000'000 + 123'456'789);
    EXPECT_EQ(table.column("zoned").values<std::int64_t>()[1], seconds * 1'000'000);
}

TEST_F(CsvReaderTest, TimestampsThatNoUnitHoldsMakeAColumnOfStrings) {
    auto const path = file("ranges.csv",
                           "late,far,sentinel,ancient\n"
                           "2300-01-01 00:00:00.123456789,300000-01-01 00:00:00,9999-12-31 23:59:59.000000000,"
                           "1500-01-01 00:00:00.5\n"
                           "2020-01-01 00:00:00,2020-01-01 00:00:00,2020-01-01 00:00:00,1500-01-01 00:00:00.000000001\n");
    CsvReader reader(path, CsvOptions());
    EXPECT_EQ(reader.schema().to_string(), "late:string, far:string, sentinel:string, ancient:string");
    auto const table = read_all(reader);
    EXPECT_EQ(table.column("late").string(0), "2300-01-01 00:00:00.123456789");
    EXPECT_EQ(table.column("sentinel").string(0), "9999-12-31 23:59:59.000000000");
}

TEST_F(CsvReaderTest, NineDigitsOfFractionMakeNanosecondsEvenWhereTheLastThreeAreZeros) {
    // As the writer writes a timestamp_ns column: the fine value after the inferred rows must still read.
    std::string text = "at\n";
    for (int row = 0; row < 5; ++row) {
        text += "2024-01-02 03:04:05.123456000\n";
    }
    text += "2024-01-02 03:04:05.123456789\n";
    CsvOptions options;
    options.infer_rows = 5;
    CsvReader reader(file("fine.csv", text), options);
    EXPECT_EQ(reader.schema().to_string(), "at:timestamp_ns");
    auto const table = read_all(reader);
    EXPECT_EQ(table.column(0).values<std::int64_t>()[5] - table.column(0).values<std::int64_t>()[0], 789);
}

TEST_F(CsvReaderTest, ADeclaredBooleanOrTimestampThatDoesNotParseSaysHowItIsSpelled) {
    auto const path = file("declared.csv", "flag,at\ntrue,2024-01-02 03:04:05\nyes,2024-01-02 03:04:05.5\n");
    Schema const flags({{"flag", DataType::boolean}, {"at", DataType::string}});
    EXPECT_THROW_WITH(static_cast<void>(read_all(path, CsvOptions(), flags)), CorruptData,
                      "declared.csv:3: column 'flag': cannot parse 'yes' as boolean "
                      "(a boolean is true or false, in any case)");
    Schema const seconds({{"flag", DataType::string}, {"at", DataType::timestamp_ms}});
    auto const milliseconds = read_all(path, CsvOptions(), seconds);
    EXPECT_EQ(milliseconds.column(1).values<std::int64_t>()[1] - milliseconds.column(1).values<std::int64_t>()[0], 500);
    auto const zoned = file("zoned.csv", "at\n2024-01-02 03:04:05+01:00\n");
    EXPECT_THROW_WITH(static_cast<void>(read_all(zoned, CsvOptions(), Schema({{"at", DataType::timestamp_us}}))),
                      CorruptData, "without a zone");
    EXPECT_EQ(read_all(zoned, CsvOptions(), Schema({{"at", DataType::timestamp_us_utc}})).num_rows(), 1u);
}

TEST_F(CsvReaderTest, PastTheInferredRowsAnIntegerSpelledOtherThanExactlyDoesNotParse) {
    // Read as 42 and 0, they would go where 42 and 0 go, not where the same
    // text goes in a table whose first rows made the column strings.
    CsvOptions options;
    options.infer_rows = 2;
    for (auto const* late : {"042", "-0", "00", "-007"}) {
        for (auto const* first : {"1\n2\n", "1.5\n2\n"}) {
            auto const path = file("late.csv", std::string("n\n") + first + late + "\n");
            CsvReader reader(path, options);
            EXPECT_THROW_WITH(static_cast<void>(read_all(reader)), CorruptData,
                              "late.csv:4: column 'n': cannot parse '" + std::string(late) + "' as "
                                  + (first[1] == '.' ? "float64" : "int64")
                                  + " (a column whose type was inferred takes integers spelled exactly");
        }
    }
    auto const path = file("late.csv", "n\n1\n2\n042\n-0\n0\n-7\n");
    // A type given is read as it says; one said to be inferred, as inference would.
    auto const given = read_all(path, options, Schema({{"n", DataType::int64}}));
    EXPECT_EQ(std::vector<std::int64_t>(given.column(0).values<std::int64_t>().begin(),
                                        given.column(0).values<std::int64_t>().end()),
              (std::vector<std::int64_t>{1, 2, 42, 0, 0, -7}));
    CsvReader said_inferred(path, options, Schema({{"n", DataType::int64}}), {true});
    EXPECT_THROW_WITH(static_cast<void>(read_all(said_inferred)), CorruptData, "cannot parse '042' as int64");
    EXPECT_THROW_WITH(CsvReader(path, options, Schema({{"n", DataType::int64}}), {true, false}), InvalidArgument,
                      "the schema has 1 columns, but 2 are said to be inferred or not");
}

TEST_F(CsvReaderTest, DigitsThatSpellAnIntegerOtherThanExactlyMakeAColumnOfStrings) {
    // `042` as a number would hash as 42, and as text in a column of strings
    // (say, where another table has `unknown` in it) as its bytes: only a
    // column of strings keeps such a key in one partition in every table.
    CsvOptions options;
    options.header = false;
    auto const path = file("spelled.csv", "42,042,-0,1.5,7,-7\n43,1,2,007,8,0\n");
    CsvReader reader(path, options);
    EXPECT_EQ(reader.schema().to_string(),
              "column0:int64, column1:string, column2:string, column3:string, column4:int64, column5:int64");
    auto const rows = read_all(reader);
    EXPECT_EQ(rows.column(1).string(0), "042");
    EXPECT_EQ(rows.column(3).string(1), "007");
    for (std::size_t column = 1; column < 4; ++column) {
        std::vector<std::size_t> const key{column};
        auto const as_read = hash_rows(rows, key);
        TableBuilder strings(Schema({{"key", DataType::string}}));
        strings.column(0).append(rows.column(column).string(0));
        strings.column(0).append(rows.column(column).string(1));
        EXPECT_EQ(as_read, hash_rows(strings.finish(), std::vector<std::size_t>{0}))
            << "column " << column << " hashes as the same text in a column of strings";
    }
}

TEST_F(CsvReaderTest, AMissingFileIsAnIoErrorNamingIt) {
    auto const path = directory_.path() / "nope.csv";
    EXPECT_THROW_WITH(CsvReader(path, CsvOptions()), IoError, "nope.csv");
}

TEST_F(CsvReaderTest, ReadsOptionsFromSettings) {
    Options settings;
    settings.set("csv_delimiter", "TAB").set("csv_quote", "None").set("csv_header", "false");  // names in any case
    settings.set("csv_chunk_bytes", "1MiB").set("csv_infer_rows", "10").set("csv_trailing_delimiter", "yes");
    auto const options = CsvOptions::from_options(settings);
    EXPECT_EQ(options.delimiter, '\t');
    EXPECT_FALSE(options.quote.has_value());
    EXPECT_FALSE(options.header);
    EXPECT_TRUE(options.trailing_delimiter);
    EXPECT_EQ(options.chunk_bytes, 1u << 20);
    EXPECT_EQ(options.infer_rows, 10u);
    EXPECT_EQ(options.bad_rows, CsvOptions::BadRows::fail);
    EXPECT_EQ(CsvOptions::from_options(Options().set("csv_bad_rows", "skip")).bad_rows, CsvOptions::BadRows::skip);
    EXPECT_THROW_WITH(CsvOptions::from_options(Options().set("csv_bad_rows", "drop")), InvalidArgument,
                      "option 'csv_bad_rows': invalid value 'drop': expected one of fail, skip");
    EXPECT_EQ(CsvOptions::from_options(Options(), CsvOptions::tbl()).delimiter, '|');
    EXPECT_THROW_WITH(CsvOptions::from_options(Options().set("csv_delimiter", "ab")), InvalidArgument,
                      "option 'csv_delimiter': invalid value 'ab': expected one character (or 'tab')");
    EXPECT_THROW_WITH(CsvOptions::from_options(Options::from_environment({"SPILLWAY_CSV_DELIMITER=ab"})),
                      InvalidArgument, "option 'csv_delimiter' (from environment variable SPILLWAY_CSV_DELIMITER)");
    EXPECT_THROW_WITH(CsvOptions::from_options(Options().set("csv_quote", "ab")), InvalidArgument,
                      "option 'csv_quote': invalid value 'ab': expected one character ('none' for no quoting, or 'tab')");
    EXPECT_THROW_WITH(CsvOptions::from_options(Options().set("csv_quote", ",")), InvalidArgument,
                      "the CSV quote and delimiter are both ','; they must differ (csv_quote, csv_delimiter)");
    EXPECT_THROW_WITH(CsvOptions::from_options(Options().set("csv_quote", "\n")), InvalidArgument,
                      "the CSV quote '\\n' cannot be a line break (csv_quote)");
    EXPECT_THROW_WITH(CsvOptions::from_options(Options().set("csv_chunk_bytes", "2GiB")), InvalidArgument,
                      "csv_chunk_bytes");
    EXPECT_THROW_WITH(CsvOptions::from_options(Options().set("csv_delimiter", "\n")), InvalidArgument,
                      "cannot be a line break");
    // Numbers and dates are written unquoted: -2, 1.5, 2020-01-02, 1e+20, inf.
    for (auto const* character : {"-", ".", "+", "1", "e", "n"}) {
        EXPECT_THROW_WITH(CsvOptions::from_options(Options().set("csv_delimiter", character)), InvalidArgument,
                          "the CSV delimiter '" + std::string(character) + "' cannot be a letter, a digit");
        EXPECT_THROW_WITH(CsvOptions::from_options(Options().set("csv_quote", character)), InvalidArgument,
                          "the CSV quote '" + std::string(character) + "' cannot be a letter, a digit");
    }
    EXPECT_EQ(CsvOptions::from_options(Options().set("csv_delimiter", ";").set("csv_quote", "'")).delimiter, ';');
}
