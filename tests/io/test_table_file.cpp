#include <spillway/io/table_file.hpp>

#include <arrow/api.h>
#include <arrow/c/bridge.h>
#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>
#include <arrow/ipc/writer.h>
#include <parquet/arrow/writer.h>
#include <parquet/file_reader.h>

#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/io/parquet_row_groups.hpp>
#include <spillway/table/arrow_interop.hpp>
#include <spillway/table/table_builder.hpp>

#include <common/error_matchers.hpp>
#include <common/temporary_directory.hpp>

#include <gtest/gtest.h>

#include "random_table.hpp"

using namespace spillway;
using namespace spillway::io;
using spillway::table::DataType;
using spillway::table::Schema;
using spillway::table::Table;
using spillway::table::TableBuilder;

namespace {

/// Every row of `path`, read as one table (a CSV file with the columns of
/// `every_type_schema`).
Table read_all(std::filesystem::path const& path, FileFormat format) {
    auto reader = open_table_file(path, format, {}, table::test::every_type_schema());
    std::vector<Table> tables;
    while (auto table = reader->read()) {
        tables.push_back(std::move(*table));
    }
    return tables.empty() ? TableBuilder(reader->schema()).finish() : Table::concatenate(tables);
}

/// Values at the edges of each type, nulls, and strings of multi-byte UTF-8.
Table edge_values() {
    TableBuilder builder(table::test::every_type_schema());
    builder.column(0).append(std::numeric_limits<std::int32_t>::min());
    builder.column(1).append(std::numeric_limits<std::int64_t>::max());
    builder.column(2).append(-0.0);
    builder.column(3).append(std::int32_t{-719528});  // 0000-01-01
    builder.column(4).append("naïve café, 日本語, 😀");
    builder.column(0).append_null();
    builder.column(1).append_null();
    builder.column(2).append(std::numeric_limits<double>::infinity());
    builder.column(3).append_null();
    builder.column(4).append("");
    builder.column(0).append(std::int32_t{7});
    builder.column(1).append(std::int64_t{-1});
    builder.column(2).append_null();
    builder.column(3).append(std::int32_t{20000});
    builder.column(4).append_null();
    auto const int64_min = std::numeric_limits<std::int64_t>::min();
    auto const int64_max = std::numeric_limits<std::int64_t>::max();
    auto const append = [&](std::size_t column, std::initializer_list<std::optional<std::int64_t>> values) {
        for (auto const value : values) {
            value ? builder.column(column).append(*value) : builder.column(column).append_null();
        }
    };
    builder.column(5).append(true);
    builder.column(5).append_null();
    builder.column(5).append(false);
    append(6, {int64_min, std::nullopt, std::int64_t{253'402'300'799'999}});  // and 9999-12-31 23:59:59.999
    append(7, {int64_max, std::nullopt, int64_min});
    append(8, {int64_min, int64_max, std::nullopt});
    append(9, {std::int64_t{0}, std::int64_t{-1}, std::nullopt});
    append(10, {std::nullopt, int64_min, int64_max});
    append(11, {std::int64_t{1}, std::nullopt, int64_min});
    return builder.finish();
}

/// Writes an Arrow table as a Parquet file with Arrow C++ directly.
void write_parquet(std::shared_ptr<arrow::Table> const& table, std::filesystem::path const& path) {
    auto const file = arrow::io::FileOutputStream::Open(path.string()).ValueOrDie();
    ASSERT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), file, 1024).ok());
    ASSERT_TRUE(file->Close().ok());
}

/// The integers 0 to `count` - 1 in a column `n`, written in one write as
/// the Parquet file `path` (one row group up to 2^20 rows); returns them.
Table write_counting_parquet(std::filesystem::path const& path, std::int64_t count) {
    TableBuilder builder(Schema({{"n", DataType::int64}}));
    for (std::int64_t row = 0; row < count; ++row) {
        builder.column(0).append(row);
    }
    auto rows = builder.finish();
    auto writer = create_table_file(path, FileFormat::parquet, rows.schema());
    writer->write(rows.slice(0, rows.num_rows()));
    writer->close();
    return rows;
}

/// Writes an Arrow table as an Arrow IPC file with Arrow C++ directly.
void write_arrow(std::shared_ptr<arrow::Table> const& table, std::filesystem::path const& path) {
    auto const file = arrow::io::FileOutputStream::Open(path.string()).ValueOrDie();
    auto const writer = arrow::ipc::MakeFileWriter(file, table->schema()).ValueOrDie();
    ASSERT_TRUE(writer->WriteTable(*table).ok());
    ASSERT_TRUE(writer->Close().ok());
    ASSERT_TRUE(file->Close().ok());
}

/// While alive, files this process writes may grow to `bytes` only: a write
/// past that fails with EFBIG (RLIMIT_FSIZE, with SIGXFSZ ignored), as one
/// to a full disk fails with ENOSPC.
class FileSizeLimit {
  public:
    explicit FileSizeLimit(rlim_t bytes) : previous_handler_(std::signal(SIGXFSZ, SIG_IGN)) {
        ::getrlimit(RLIMIT_FSIZE, &previous_);
        rlimit const limit{bytes, previous_.rlim_max};
        EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
    }
    FileSizeLimit(FileSizeLimit const&) = delete;
    FileSizeLimit& operator=(FileSizeLimit const&) = delete;
    ~FileSizeLimit() {
        ::setrlimit(RLIMIT_FSIZE, &previous_);
        std::signal(SIGXFSZ, previous_handler_);
    }

  private:
    rlimit previous_{};
    void (*previous_handler_)(int);
};

class TableFileTest : public testing::TestWithParam<FileFormat> {
  protected:
    std::filesystem::path path(std::string const& name) const {
        return directory_.path() / (name + std::string(extension_of(GetParam())));
    }

    /// The strings the format holds: CSV any bytes, Parquet and Arrow UTF-8.
    [[nodiscard]] table::test::RandomStrings strings() const {
        return GetParam() == FileFormat::csv ? table::test::RandomStrings::any_bytes : table::test::RandomStrings::utf8;
    }

    test::TemporaryDirectory directory_;
};

}  // namespace

TEST_P(TableFileTest, RoundTripsEveryTypeWithNullsAndMultiByteUtf8) {
    auto const file = path("edges");
    auto const edges = edge_values();
    auto const random = table::test::random_table(3000, 17, 0.2, 30, strings());
    auto writer = create_table_file(file, GetParam(), edges.schema());
    writer->write(edges.slice(0, edges.num_rows()));
    writer->write(random.slice(0, random.num_rows()));
    writer->close();
    EXPECT_EQ(writer->bytes_written(), std::filesystem::file_size(file));
    std::vector<Table> const both{edges, random};
    EXPECT_EQ(read_all(file, GetParam()), Table::concatenate(both));
    if (GetParam() != FileFormat::csv) {
        auto const reader = open_table_file(file, GetParam());
        EXPECT_EQ(reader->schema(), edges.schema()) << "the file carries its types";
        EXPECT_EQ(reader->rows(), edges.num_rows() + random.num_rows()) << "and its row count";
    } else {
        EXPECT_FALSE(open_table_file(file, GetParam(), {}, edges.schema())->rows().has_value());
    }
}

TEST_P(TableFileTest, AnEmptyFileKeepsItsColumns) {
    auto const file = path("empty");
    auto writer = create_table_file(file, GetParam(), table::test::every_type_schema());
    writer->close();
    auto const table = read_all(file, GetParam());
    EXPECT_EQ(table.num_rows(), 0u);
    EXPECT_EQ(table.schema(), table::test::every_type_schema());
}

TEST_P(TableFileTest, AWriterRefusesOtherColumnsAndWritesAfterClose) {
    auto const file = path("refuse");
    auto writer = create_table_file(file, GetParam(), table::test::every_type_schema());
    TableBuilder other(Schema({{"x", DataType::int64}}));
    other.column(0).append(std::int64_t{1});
    EXPECT_THROW_WITH(writer->write(other.finish()), InvalidArgument, "cannot go to '" + file.string());
    writer->close();
    EXPECT_THROW_WITH(writer->write(edge_values()), InvalidArgument, "is closed");
}

TEST_P(TableFileTest, AfterAFailedWriteEveryLaterWriteAndCloseSaysTheFileIsIncomplete) {
    auto const file = path("full");
    auto const rows = table::test::random_table(5000, 3, 0.1, 40, strings());
    auto writer = create_table_file(file, GetParam(), rows.schema());
    {
        FileSizeLimit const full(256);
        EXPECT_THROW(
            {
                writer->write(rows.slice(0, rows.num_rows()));
                writer->close();
            },
            IoError);
    }
    // Retried with room on the disk, the rows written half, or not at all,
    // must not end in a file that reads as whole.
    EXPECT_THROW_WITH(writer->close(), IoError, "is incomplete: writing it failed before");
    EXPECT_THROW_WITH(writer->write(rows.slice(0, 10)), IoError, "is incomplete");
    EXPECT_THROW_WITH(writer->close(), IoError, "is incomplete");
}

INSTANTIATE_TEST_SUITE_P(Formats, TableFileTest,
                         testing::Values(FileFormat::csv, FileFormat::parquet, FileFormat::arrow),
                         [](auto const& format) { return std::string(to_string(format.param)); });

/// The rows of each row group of the Parquet file `path`, from its footer.
std::vector<std::int64_t> row_groups(std::filesystem::path const& path) {
    auto const reader = parquet::ParquetFileReader::OpenFile(path.string());
    std::vector<std::int64_t> rows;
    for (int group = 0; group < reader->metadata()->num_row_groups(); ++group) {
        rows.push_back(reader->metadata()->RowGroup(group)->num_rows());
    }
    return rows;
}

TEST(ParquetFile, RowGroupsAreBoundedByRowsAndByBytes) {
    test::TemporaryDirectory directory;
    auto const rows = table::test::random_table(2500, 5, 0.1, 10, table::test::RandomStrings::utf8);
    WriteOptions by_rows;
    by_rows.row_group_rows = 1000;
    auto writer = create_table_file(directory.path() / "rows.parquet", FileFormat::parquet, rows.schema(), by_rows);
    writer->write(rows.slice(0, rows.num_rows()));
    writer->close();
    EXPECT_EQ(read_all(directory.path() / "rows.parquet", FileFormat::parquet), rows);
    EXPECT_EQ(row_groups(directory.path() / "rows.parquet"), (std::vector<std::int64_t>{1000, 1000, 500}));

    WriteOptions by_bytes;
    by_bytes.row_group_bytes = rows.slice(0, 500).byte_size() + 1;
    writer = create_table_file(directory.path() / "bytes.parquet", FileFormat::parquet, rows.schema(), by_bytes);
    for (std::size_t begin = 0; begin < rows.num_rows(); begin += 500) {
        writer->write(rows.slice(begin, 500));
    }
    writer->close();
    EXPECT_EQ(read_all(directory.path() / "bytes.parquet", FileFormat::parquet), rows);
    EXPECT_EQ(row_groups(directory.path() / "bytes.parquet"), (std::vector<std::int64_t>(5, 500)))
        << "each write of 500 rows fills a row group";
}

TEST(ParquetFile, StringsReadBackTheSameWhetherTheirPagesAreDictionaryEncodedOrNot) {
    // In row group 0, column s holds four distinct values (a null among
    // them), which the writer keeps in a dictionary; in row group 1 distinct
    // strings enough to overflow it, so that its later pages are plain.
    // Columns of other types come before and after it.
    constexpr std::size_t group_rows = 40'000;
    TableBuilder builder(Schema({{"n", DataType::int64}, {"s", DataType::string}, {"x", DataType::float64}}));
    for (std::size_t row = 0; row < 2 * group_rows; ++row) {
        builder.column(0).append(static_cast<std::int64_t>(row));
        builder.column(2).append(static_cast<double>(row) / 4);
    }
    for (std::size_t row = 0; row < group_rows; ++row) {
        if (row % 7 == 3) {
            builder.column(1).append_null();
        } else {
            builder.column(1).append(std::string_view("ANR").substr(row % 3, 1));
        }
    }
    for (std::size_t row = 0; row < group_rows; ++row) {
        builder.column(1).append("a distinct string, number " + std::to_string(row * 7919));
    }
    auto const rows = builder.finish();
    test::TemporaryDirectory directory;
    auto const file = directory.path() / "strings.parquet";
    WriteOptions options;
    options.row_group_rows = group_rows;
    auto writer = create_table_file(file, FileFormat::parquet, rows.schema(), options);
    writer->write(rows.slice(0, rows.num_rows()));
    writer->close();
    auto const metadata = parquet::ParquetFileReader::OpenFile(file.string())->metadata();
    ASSERT_EQ(metadata->num_row_groups(), 2);
    auto const plain_data_pages = [&](int group) {
        auto const chunk = metadata->RowGroup(group)->ColumnChunk(1);
        auto const& pages = chunk->encoding_stats();
        return std::count_if(pages.begin(), pages.end(), [](parquet::PageEncodingStats const& stats) {
            return stats.page_type == parquet::PageType::DATA_PAGE && stats.encoding == parquet::Encoding::PLAIN;
        });
    };
    ASSERT_EQ(plain_data_pages(0), 0);
    ASSERT_GT(plain_data_pages(1), 0);

    EXPECT_EQ(read_all(file, FileFormat::parquet), rows);
    ParquetRowGroups const groups(file);
    EXPECT_EQ(groups.read(0), rows.slice(0, group_rows));
    EXPECT_EQ(groups.read(1), rows.slice(group_rows, group_rows));
    std::vector<Table> batches;
    for (auto reader = groups.reader({0}); auto batch = reader->read();) {
        batches.push_back(std::move(*batch));
    }
    EXPECT_EQ(Table::concatenate(batches), rows.slice(0, group_rows));
}

TEST(ParquetFile, AColumnWhoseFirstRowsKeepComingNewIsWrittenWithoutADictionary) {
    // `key` is new in every row, `order` in every fourth (as an order's line
    // items), `day` one of 300 and `flag` one of 3: only the first two keep
    // coming new, doubling their distinct values with the rows.
    auto const rows_of = [](std::size_t count) {
        TableBuilder builder(Schema({{"key", DataType::int64},
                                     {"order", DataType::int64},
                                     {"day", DataType::date32},
                                     {"flag", DataType::string}}));
        for (std::size_t row = 0; row < count; ++row) {
            builder.column(0).append(static_cast<std::int64_t>(row * 7919 % 1'000'003));
            builder.column(1).append(static_cast<std::int64_t>(row / 4));
            builder.column(2).append(static_cast<std::int32_t>(row * 37 % 300));
            builder.column(3).append(std::string_view("ANR").substr(row % 3, 1));
        }
        return builder.finish();
    };
    auto const dictionary_pages = [](std::filesystem::path const& file) {
        auto const metadata = parquet::ParquetFileReader::OpenFile(file.string())->metadata();
        auto const group = metadata->RowGroup(0);
        std::vector<bool> pages;
        for (int column = 0; column < group->num_columns(); ++column) {
            pages.push_back(group->ColumnChunk(column)->has_dictionary_page());
        }
        return pages;
    };
    test::TemporaryDirectory directory;
    auto const write = [&](std::string const& name, Table const& rows) {
        auto const file = directory.path() / name;
        auto writer = create_table_file(file, FileFormat::parquet, rows.schema());
        writer->write(rows.slice(0, rows.num_rows()));
        writer->close();
        EXPECT_EQ(read_all(file, FileFormat::parquet), rows) << name;
        return file;
    };
    EXPECT_EQ(dictionary_pages(write("many.parquet", rows_of(20'000))), (std::vector<bool>{false, false, true, true}));
    // Under 1024 rows there is too little to tell: every column has a dictionary.
    EXPECT_EQ(dictionary_pages(write("few.parquet", rows_of(1000))), (std::vector<bool>{true, true, true, true}));
    // Written 500 rows at a time, as a partition's pieces come, the columns
    // are judged by the row group's first rows, not by the first 500.
    auto const rows = rows_of(20'000);
    auto const pieces = directory.path() / "pieces.parquet";
    auto writer = create_table_file(pieces, FileFormat::parquet, rows.schema());
    for (std::size_t begin = 0; begin < rows.num_rows(); begin += 500) {
        writer->write(rows.slice(begin, 500));
    }
    writer->close();
    EXPECT_EQ(read_all(pieces, FileFormat::parquet), rows);
    EXPECT_EQ(dictionary_pages(pieces), (std::vector<bool>{false, false, true, true}));
}

TEST(ParquetFile, ALargeRowGroupIsReadInBatchesOfAtMost65536Rows) {
    test::TemporaryDirectory directory;
    auto const file = directory.path() / "large.parquet";
    auto const rows = write_counting_parquet(file, 150'000);
    ASSERT_EQ(row_groups(file), (std::vector<std::int64_t>{150'000}));
    auto reader = open_table_file(file, FileFormat::parquet);
    EXPECT_GE(reader->largest_read_bytes(), 65536u * sizeof(std::int64_t)) << "at least the first batch";
    EXPECT_LT(reader->largest_read_bytes(), rows.byte_size()) << "a batch's share of the row group, not all of it";
    std::vector<Table> batches;
    while (auto batch = reader->read()) {
        EXPECT_LE(batch->num_rows(), 65536u);
        batches.push_back(std::move(*batch));
    }
    EXPECT_EQ(batches.size(), 3u);
    EXPECT_EQ(Table::concatenate(batches), rows);
}

TEST(ParquetFile, ArrowsBuffersComeFromItsJemallocWhereTheLibraryHasOne) {
    test::TemporaryDirectory directory;
    auto const file = directory.path() / "rows.parquet";
    write_counting_parquet(file, 100'000);

    arrow::MemoryPool* jemalloc = nullptr;
    auto* const pool = arrow::jemalloc_memory_pool(&jemalloc).ok() ? jemalloc : arrow::system_memory_pool();
    auto const before = pool->bytes_allocated();
    auto reader = open_table_file(file, FileFormat::parquet);
    EXPECT_GT(pool->bytes_allocated(), before) << "the reader's pages are in " << pool->backend_name();
    EXPECT_GT(reader->held_bytes(), 0u);
    reader.reset();
    EXPECT_EQ(pool->bytes_allocated(), before) << "and go back to it";
}

TEST(ParquetFile, NarrowerIntegersFloat16Float32AndOtherStringsAreConvertedOnRead) {
    test::TemporaryDirectory directory;
    arrow::Int16Builder int16;
    arrow::UInt32Builder uint32;
    arrow::FloatBuilder float32;
    arrow::HalfFloatBuilder float16;
    arrow::LargeStringBuilder large;
    ASSERT_TRUE(int16.AppendValues({-3, 4}).ok());
    ASSERT_TRUE(uint32.AppendValues({4000000000U, 1}).ok());
    ASSERT_TRUE(float32.AppendValues({1.5F, -2.0F}).ok());
    ASSERT_TRUE(float16.AppendValues({0x3e00, 0xc000}).ok());  // 1.5 and -2.0, as IEEE half floats
    ASSERT_TRUE(large.AppendValues({"a", "ü"}).ok());
    auto const table = arrow::Table::Make(
        arrow::schema({arrow::field("s", arrow::int16()), arrow::field("u", arrow::uint32()),
                       arrow::field("f", arrow::float32()), arrow::field("h", arrow::float16()),
                       arrow::field("t", arrow::large_utf8())}),
        {int16.Finish().ValueOrDie(), uint32.Finish().ValueOrDie(), float32.Finish().ValueOrDie(),
         float16.Finish().ValueOrDie(), large.Finish().ValueOrDie()});
    write_parquet(table, directory.path() / "narrow.parquet");
    auto const read = read_all(directory.path() / "narrow.parquet", FileFormat::parquet);
    EXPECT_EQ(read.schema().to_string(), "s:int32, u:int64, f:float64, h:float64, t:string");
    EXPECT_EQ(read.column(0).values<std::int32_t>()[0], -3);
    EXPECT_EQ(read.column(1).values<std::int64_t>()[0], 4000000000);
    EXPECT_EQ(read.column(2).values<double>()[1], -2.0);
    EXPECT_EQ(read.column(3).values<double>()[0], 1.5);
    EXPECT_EQ(read.column(3).values<double>()[1], -2.0);
    EXPECT_EQ(read.column(4).string(1), "ü");
}

TEST(ParquetFile, ADecimalOfUpTo15DigitsIsReadAsTheDoubleNearestEachValue) {
    test::TemporaryDirectory directory;
    // Unscaled integers of up to 15 digits at several scales, nulls among them.
    std::mt19937_64 random(11);
    std::uniform_int_distribution<std::int64_t> unscaled(-999'999'999'999'999, 999'999'999'999'999);
    std::vector<std::shared_ptr<arrow::Field>> fields;
    std::vector<std::shared_ptr<arrow::Array>> columns;
    std::vector<std::vector<std::optional<std::int64_t>>> drawn;
    for (auto const scale : {0, 1, 2, 7, 15, -3}) {
        auto const type = arrow::decimal128(15, scale);
        arrow::Decimal128Builder builder(type);
        drawn.emplace_back();
        for (int row = 0; row < 5000; ++row) {
            if (row % 17 == 5) {
                ASSERT_TRUE(builder.AppendNull().ok());
                drawn.back().push_back(std::nullopt);
            } else {
                auto const value = row == 0 ? std::int64_t{7} : unscaled(random);
                ASSERT_TRUE(builder.Append(arrow::Decimal128(value)).ok());
                drawn.back().push_back(value);
            }
        }
        fields.push_back(arrow::field("d" + std::to_string(fields.size()), type));
        columns.push_back(builder.Finish().ValueOrDie());
    }
    // Parquet has no negative scales; Arrow IPC holds them all.
    auto const table = arrow::Table::Make(arrow::schema(fields), columns);
    write_parquet(table->RemoveColumn(5).ValueOrDie(), directory.path() / "decimals.parquet");
    write_arrow(table, directory.path() / "decimals.arrow");
    auto const parquet = read_all(directory.path() / "decimals.parquet", FileFormat::parquet);
    auto const read = read_all(directory.path() / "decimals.arrow", FileFormat::arrow);
    std::vector<std::size_t> const parquet_columns{0, 1, 2, 3, 4};
    EXPECT_EQ(parquet, read.select(parquet_columns));
    std::size_t index = 0;
    for (auto const scale : {0, 1, 2, 7, 15, -3}) {
        auto const& column = read.column(index);
        ASSERT_EQ(column.type(), DataType::float64);
        for (std::size_t row = 0; row < drawn[index].size(); ++row) {
            auto const value = drawn[index][row];
            ASSERT_EQ(column.is_null(row), !value.has_value());
            if (value) {
                // The decimal's text, read by strtod: the double nearest it.
                auto const text = std::to_string(*value) + "e" + std::to_string(-scale);
                ASSERT_EQ(column.values<double>()[row], std::strtod(text.c_str(), nullptr)) << text;
            }
        }
        ++index;
    }
}

TEST(ParquetFile, LegacyInt96TimestampsAreReadInMicrosecondsFarBeyondTheYearsOfNanoseconds) {
    test::TemporaryDirectory directory;
    // 1500-01-01, 2020-01-01 00:00:00.123456 and 3000-01-01, in microseconds.
    std::vector<std::int64_t> const moments{-14'831'769'600'000'000, 1'577'836'800'123'456, 32'503'680'000'000'000};
    arrow::TimestampBuilder builder(arrow::timestamp(arrow::TimeUnit::MICRO), arrow::default_memory_pool());
    ASSERT_TRUE(builder.AppendValues(moments).ok());
    auto const table = arrow::Table::Make(arrow::schema({arrow::field("at", builder.type())}),
                                          {builder.Finish().ValueOrDie()});
    auto const path = directory.path() / "int96.parquet";
    auto const file = arrow::io::FileOutputStream::Open(path.string()).ValueOrDie();
    auto const int96 = parquet::ArrowWriterProperties::Builder().enable_deprecated_int96_timestamps()->build();
    ASSERT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), file, 1024,
                                           parquet::default_writer_properties(), int96)
                    .ok());
    ASSERT_TRUE(file->Close().ok());
    auto const read = read_all(path, FileFormat::parquet);
    EXPECT_EQ(read.schema().to_string(), "at:timestamp_us");
    auto const values = read.column(0).values<std::int64_t>();
    EXPECT_EQ(std::vector<std::int64_t>(values.begin(), values.end()), moments);
}

TEST(ArrowFile, ADecimalValueOfMoreDigitsThanItsTypeIsCorruptDataNotTruncated) {
    test::TemporaryDirectory directory;
    for (auto const& value : {arrow::Decimal128(1, 5), arrow::Decimal128(1'000'000'000'000'000)}) {
        arrow::Decimal128Builder builder(arrow::decimal128(15, 2));
        ASSERT_TRUE(builder.Append(arrow::Decimal128(7)).ok());
        ASSERT_TRUE(builder.AppendNull().ok());
        ASSERT_TRUE(builder.Append(value).ok());
        write_arrow(arrow::Table::Make(arrow::schema({arrow::field("price", builder.type())}),
                                       {builder.Finish().ValueOrDie()}),
                    directory.path() / "over.arrow");
        EXPECT_THROW_WITH(static_cast<void>(read_all(directory.path() / "over.arrow", FileFormat::arrow)), CorruptData,
                          "column 'price' holds a value of more digits than its type decimal128(15, 2) allows (row 2");
    }
}

TEST(ParquetFile, AWideDecimalIsReadValueByValueWhereFifteenSignificantDigitsHoldEach) {
    // The defaults of other tools: DuckDB's sums of integers (decimal(38, 0)),
    // Spark's decimal(38, 18), Polars' decimal(38, 2), and a decimal256.
    test::TemporaryDirectory directory;
    auto const column = [](std::shared_ptr<arrow::DataType> const& type, std::vector<std::string> const& texts) {
        auto builder = arrow::MakeBuilder(type).ValueOrDie();
        for (auto const& text : texts) {
            if (text.empty()) {
                EXPECT_TRUE(builder->AppendNull().ok());
            } else {
                // The text's digits at the column's scale.
                auto const scale = static_cast<arrow::DecimalType const&>(*type).scale();
                arrow::Decimal256 value;
                std::int32_t text_precision = 0;
                std::int32_t text_scale = 0;
                EXPECT_TRUE(arrow::Decimal256::FromString(text, &value, &text_precision, &text_scale).ok());
                auto const rescaled = value.Rescale(text_scale, scale).ValueOrDie();
                if (type->id() == arrow::Type::DECIMAL256) {
                    EXPECT_TRUE(static_cast<arrow::Decimal256Builder&>(*builder).Append(rescaled).ok());
                } else {
                    auto const words = rescaled.little_endian_array();  // within 128 bits here
                    arrow::Decimal128 const narrow(static_cast<std::int64_t>(words[1]), words[0]);
                    EXPECT_TRUE(static_cast<arrow::Decimal128Builder&>(*builder).Append(narrow).ok());
                }
            }
        }
        return builder->Finish().ValueOrDie();
    };
    std::vector<std::string> const texts{"0", "1", "-7", "", "123456789012345", "100000000000000000000000000000"};
    std::vector<std::string> const fractions{"1.5", "-0.000000000000000001", "", "123456.789", "0"};
    auto const table = arrow::Table::Make(
        arrow::schema({arrow::field("sum", arrow::decimal128(38, 0)), arrow::field("spark", arrow::decimal128(38, 18)),
                       arrow::field("wide", arrow::decimal256(76, 40))}),
        {column(arrow::decimal128(38, 0), texts), column(arrow::decimal128(38, 18), fractions),
         column(arrow::decimal256(76, 40), fractions)}
    );
    // Parquet holds a column of one length; the first column's lengths differ, so two files.
    write_arrow(table->SelectColumns({0}).ValueOrDie(), directory.path() / "sums.arrow");
    write_parquet(table->SelectColumns({0}).ValueOrDie(), directory.path() / "sums.parquet");
    for (auto const& name : {"sums.arrow", "sums.parquet"}) {
        auto const read = read_all(directory.path() / name, name == std::string("sums.arrow") ? FileFormat::arrow
                                                                                               : FileFormat::parquet);
        EXPECT_EQ(read.schema().to_string(), "sum:float64");
        auto const values = read.column(0).values<double>();
        EXPECT_EQ(std::vector<double>(values.begin(), values.begin() + 3), (std::vector<double>{0.0, 1.0, -7.0}));
        EXPECT_TRUE(read.column(0).is_null(3));
        EXPECT_EQ(values[4], 123456789012345.0);
        EXPECT_EQ(values[5], 1e29);
    }
    auto const fraction_table = table->SelectColumns({1, 2}).ValueOrDie()->Slice(0, 5);
    write_parquet(fraction_table, directory.path() / "fractions.parquet");
    auto const read = read_all(directory.path() / "fractions.parquet", FileFormat::parquet);
    EXPECT_EQ(read.schema().to_string(), "spark:float64, wide:float64");
    for (std::size_t index = 0; index < 2; ++index) {
        auto const values = read.column(index).values<double>();
        EXPECT_EQ(values[0], 1.5);
        EXPECT_EQ(values[1], -1e-18);  // 1e-18 is no double exactly: the nearest one
        EXPECT_TRUE(read.column(index).is_null(2));
        EXPECT_EQ(values[3], 123456.789);
        EXPECT_EQ(values[4], 0.0);
    }
    // Random values of up to 15 significant digits, followed by up to 40
    // zeros, at scales far beyond ±22 both ways: each the double strtod
    // finds nearest its text. (Arrow IPC holds negative scales.)
    std::mt19937_64 random(5);
    std::uniform_int_distribution<std::int64_t> digits(-999'999'999'999'999, 999'999'999'999'999);
    std::uniform_int_distribution<std::int32_t> zeros(0, 40);
    for (auto const scale : {-40, -10, 0, 18, 30, 60}) {
        arrow::Decimal256Builder builder(arrow::decimal256(76, scale));
        std::vector<double> expected;
        for (int row = 0; row < 2000; ++row) {
            auto const drawn = digits(random);
            auto const shift = zeros(random);
            ASSERT_TRUE(builder.Append(arrow::Decimal256(drawn) * arrow::Decimal256::GetScaleMultiplier(shift)).ok());
            auto const text = std::to_string(drawn) + "e" + std::to_string(shift - scale);
            expected.push_back(std::strtod(text.c_str(), nullptr));
        }
        write_arrow(
            arrow::Table::Make(arrow::schema({arrow::field("x", builder.type())}), {builder.Finish().ValueOrDie()}),
            directory.path() / "random.arrow"
        );
        auto const random_table = read_all(directory.path() / "random.arrow", FileFormat::arrow);
        auto const random_values = random_table.column(0).values<double>();
        EXPECT_EQ(std::vector<double>(random_values.begin(), random_values.end()), expected) << "scale " << scale;
    }
    // The narrow decimals of Arrow, 32 and 64 bits.
    arrow::Decimal32Builder narrow(arrow::decimal32(9, 2));
    ASSERT_TRUE(narrow.Append(arrow::Decimal32(-123456789)).ok());
    arrow::Decimal64Builder middle(arrow::decimal64(18, 4));
    ASSERT_TRUE(middle.Append(arrow::Decimal64(12'345'678)).ok());
    write_arrow(arrow::Table::Make(arrow::schema({arrow::field("narrow", narrow.type()),
                                                  arrow::field("middle", middle.type())}),
                                   {narrow.Finish().ValueOrDie(), middle.Finish().ValueOrDie()}),
                directory.path() / "narrow.arrow");
    auto const narrow_table = read_all(directory.path() / "narrow.arrow", FileFormat::arrow);
    EXPECT_EQ(narrow_table.column(0).values<double>()[0], -1234567.89);
    EXPECT_EQ(narrow_table.column(1).values<double>()[0], 1234.5678);
}

TEST(ArrowFile, ADecimalBeyondItsPrecisionOrFloat64sRangeIsRefusedNotMisread) {
    test::TemporaryDirectory directory;
    auto const refused = [&](std::shared_ptr<arrow::DataType> const& type, arrow::Decimal256 const& value) {
        arrow::Decimal256Builder builder(type);
        EXPECT_TRUE(builder.Append(value).ok());
        write_arrow(arrow::Table::Make(arrow::schema({arrow::field("x", type)}), {builder.Finish().ValueOrDie()}),
                    directory.path() / "refused.arrow");
        return [&directory] { static_cast<void>(read_all(directory.path() / "refused.arrow", FileFormat::arrow)); };
    };
    // 10^76 has 77 digits; -2^255 has no magnitude within 256 bits.
    EXPECT_THROW_WITH(refused(arrow::decimal256(76, 0), arrow::Decimal256::GetScaleMultiplier(76))(), CorruptData,
                      "more digits than its type decimal256(76, 0) allows");
    auto const lowest = arrow::Decimal256(arrow::BasicDecimal256::LittleEndianArray, {0, 0, 0, std::uint64_t{1} << 63});
    EXPECT_THROW_WITH(refused(arrow::decimal256(40, 0), lowest)(), CorruptData,
                      "more digits than its type decimal256(40, 0) allows");
    // 1e-400 and 1e400: one digit, but beyond any double.
    EXPECT_THROW_WITH(refused(arrow::decimal256(76, 400), arrow::Decimal256(1))(), InvalidArgument,
                      "beyond float64's range");
    EXPECT_THROW_WITH(refused(arrow::decimal256(76, -400), arrow::Decimal256(1))(), InvalidArgument,
                      "beyond float64's range");
}

TEST(ParquetFile, ADecimalValueOfMoreThan15SignificantDigitsFailsNamingItsColumnRowAndValue) {
    test::TemporaryDirectory directory;
    arrow::Decimal128Builder sums(arrow::decimal128(38, 2));
    ASSERT_TRUE(sums.Append(arrow::Decimal128(150)).ok());
    ASSERT_TRUE(sums.Append(arrow::Decimal128::FromString("12345678901234.56").ValueOrDie()).ok());
    write_parquet(arrow::Table::Make(arrow::schema({arrow::field("total", sums.type())}), {sums.Finish().ValueOrDie()}),
                  directory.path() / "sums.parquet");
    EXPECT_THROW_WITH(static_cast<void>(read_all(directory.path() / "sums.parquet", FileFormat::parquet)),
                      InvalidArgument,
                      "column 'total' holds a value of more than 15 significant digits, or beyond float64's range, "
                      "which spillway cannot read exactly as a float64 (row 1 of a batch: 12345678901234.56)");
}

TEST(ParquetFile, AUint64BeyondInt64FailsNamingItsColumn) {
    test::TemporaryDirectory directory;
    auto const write_counts = [&](std::string const& name, std::vector<std::uint64_t> const& values) {
        arrow::UInt64Builder counts;
        EXPECT_TRUE(counts.AppendValues(values).ok());
        write_parquet(arrow::Table::Make(arrow::schema({arrow::field("count", arrow::uint64())}),
                                         {counts.Finish().ValueOrDie()}),
                      directory.path() / name);
        return directory.path() / name;
    };
    auto const small = read_all(write_counts("small.parquet", {5, (std::uint64_t{1} << 63) - 1}), FileFormat::parquet);
    EXPECT_EQ(small.schema().to_string(), "count:int64");
    EXPECT_EQ(small.column(0).values<std::int64_t>()[1], std::numeric_limits<std::int64_t>::max());
    auto const large = write_counts("large.parquet", {5, std::uint64_t{1} << 63});
    EXPECT_THROW_WITH(static_cast<void>(read_all(large, FileFormat::parquet)), InvalidArgument,
                      "column 'count' holds a value that spillway's int64 cannot hold");
}

TEST(ParquetFile, AColumnOfNullsOnlyOfArrowsNullTypeIsReadAsStringsAllNull) {
    // What pyarrow makes of a pandas column of None, and DuckDB of `NULL AS x`.
    test::TemporaryDirectory directory;
    arrow::Int64Builder ids;
    ASSERT_TRUE(ids.AppendValues({1, 2, 3}).ok());
    auto const table = arrow::Table::Make(
        arrow::schema({arrow::field("id", arrow::int64()), arrow::field("comment", arrow::null())}),
        {ids.Finish().ValueOrDie(), std::make_shared<arrow::NullArray>(3)}
    );
    write_parquet(table, directory.path() / "nulls.parquet");
    write_arrow(table, directory.path() / "nulls.arrow");
    for (auto const& [name, format] : {std::pair("nulls.parquet", FileFormat::parquet),
                                       std::pair("nulls.arrow", FileFormat::arrow)}) {
        auto const read = read_all(directory.path() / name, format);
        EXPECT_EQ(read.schema().to_string(), "id:int64, comment:string") << name;
        ASSERT_EQ(read.num_rows(), 3U);
        for (std::size_t row = 0; row < 3; ++row) {
            EXPECT_TRUE(read.column(1).is_null(row)) << name;
        }
    }
}

TEST(ParquetFile, AColumnOfATypeSpillwayDoesNotReadIsRefusedByName) {
    test::TemporaryDirectory directory;
    arrow::BinaryBuilder blobs;
    ASSERT_TRUE(blobs.Append("\x01\x02").ok());
    auto const table = arrow::Table::Make(arrow::schema({arrow::field("blob", arrow::binary())}),
                                          {blobs.Finish().ValueOrDie()});
    write_parquet(table, directory.path() / "binary.parquet");
    EXPECT_THROW_WITH(static_cast<void>(open_table_file(directory.path() / "binary.parquet", FileFormat::parquet)),
                      InvalidArgument, "column 'blob' has the type binary, which spillway does not read");
}

TEST(ArrowFile, AnArrowIpcFileSaysHowManyReadsItTakesAndParquetDoesNot) {
    test::TemporaryDirectory directory;
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
    for (std::int64_t batch = 0; batch < 5; ++batch) {
        arrow::Int64Builder values;
        ASSERT_TRUE(values.AppendValues({batch, batch + 1}).ok());
        batches.push_back(arrow::RecordBatch::Make(arrow::schema({arrow::field("x", arrow::int64())}), 2,
                                                   {values.Finish().ValueOrDie()}));
    }
    auto const table = arrow::Table::FromRecordBatches(batches).ValueOrDie();
    write_arrow(table, directory.path() / "batches.arrow");
    auto reader = open_table_file(directory.path() / "batches.arrow", FileFormat::arrow);
    ASSERT_EQ(reader->reads(), std::optional<std::uint64_t>(5));
    std::uint64_t reads = 0;
    while (reader->read()) {
        ++reads;
    }
    EXPECT_EQ(reads, 5U);
    write_parquet(table, directory.path() / "batches.parquet");
    EXPECT_EQ(open_table_file(directory.path() / "batches.parquet", FileFormat::parquet)->reads(), std::nullopt);
}

TEST(ArrowFile, TimestampsInSecondsOrOfAnyZoneAndDate64AreReadAsSpillwaysTypes) {
    test::TemporaryDirectory directory;
    arrow::TimestampBuilder seconds(arrow::timestamp(arrow::TimeUnit::SECOND), arrow::default_memory_pool());
    arrow::TimestampBuilder zoned(arrow::timestamp(arrow::TimeUnit::MICRO, "America/New_York"),
                                  arrow::default_memory_pool());
    arrow::Date64Builder dates;
    arrow::BooleanBuilder flags;
    ASSERT_TRUE(seconds.AppendValues({-2, 1'700'000'000}).ok());
    ASSERT_TRUE(zoned.AppendValues({5, -6}).ok());
    ASSERT_TRUE(dates.AppendValues({86'400'000, -86'400'000}).ok());
    ASSERT_TRUE(flags.AppendValues(std::vector<bool>{false, true}).ok());
    auto const table = arrow::Table::Make(
        arrow::schema({arrow::field("s", seconds.type()), arrow::field("z", zoned.type()),
                       arrow::field("d", arrow::date64()), arrow::field("b", arrow::boolean())}),
        {seconds.Finish().ValueOrDie(), zoned.Finish().ValueOrDie(), dates.Finish().ValueOrDie(),
         flags.Finish().ValueOrDie()});
    write_arrow(table, directory.path() / "kinds.arrow");
    auto const read = read_all(directory.path() / "kinds.arrow", FileFormat::arrow);
    EXPECT_EQ(read.schema().to_string(), "s:timestamp_ms, z:timestamp_us_utc, d:date32, b:boolean");
    EXPECT_EQ(read.column(0).values<std::int64_t>()[0], -2'000);
    EXPECT_EQ(read.column(0).values<std::int64_t>()[1], 1'700'000'000'000);
    EXPECT_EQ(read.column(1).values<std::int64_t>()[1], -6);
    EXPECT_EQ(read.column(2).values<std::int32_t>()[1], -1);
    EXPECT_EQ(read.column(3).values<std::uint8_t>()[1], 1);
}

TEST(ParquetFile, AFileThatIsNotParquetOrIsTruncatedIsCorruptDataNamingIt) {
    test::TemporaryDirectory directory;
    auto const garbage = directory.path() / "garbage.parquet";
    std::ofstream(garbage) << "id,name\n1,x\n";
    EXPECT_THROW_WITH(static_cast<void>(open_table_file(garbage, FileFormat::parquet)), CorruptData,
                      "'" + garbage.string() + "' is not a readable Parquet file");

    auto const empty_footer = directory.path() / "empty_footer.parquet";
    std::ofstream(empty_footer) << "PAR1" << std::string(100, '\0') << std::string(4, '\0') << "PAR1";
    EXPECT_THROW_WITH(static_cast<void>(open_table_file(empty_footer, FileFormat::parquet)), CorruptData,
                      "'" + empty_footer.string() + "' is not a readable Parquet file");

    auto const whole = directory.path() / "whole.parquet";
    auto const rows = table::test::random_table(1000, 9, 0.1, 40, table::test::RandomStrings::utf8);
    auto writer = create_table_file(whole, FileFormat::parquet, rows.schema());
    writer->write(rows.slice(0, rows.num_rows()));
    writer->close();
    auto const truncated = directory.path() / "truncated.parquet";
    std::filesystem::copy_file(whole, truncated);
    std::filesystem::resize_file(truncated, std::filesystem::file_size(whole) / 2);
    EXPECT_THROW_WITH(static_cast<void>(open_table_file(truncated, FileFormat::parquet)), CorruptData,
                      truncated.string());
    EXPECT_THROW_WITH(static_cast<void>(open_table_file(directory.path() / "missing.parquet", FileFormat::parquet)),
                      IoError, "missing.parquet");
}

TEST(ParquetFile, APageThatDoesNotDecodeIsCorruptDataNamingTheFile) {
    test::TemporaryDirectory directory;
    auto const file = directory.path() / "pages.parquet";
    auto const rows = table::test::random_table(1000, 4, 0.1, 40, table::test::RandomStrings::utf8);
    auto writer = create_table_file(file, FileFormat::parquet, rows.schema());
    writer->write(rows.slice(0, rows.num_rows()));
    writer->close();
    {
        std::fstream bytes(file, std::ios::in | std::ios::out | std::ios::binary);
        bytes.seekp(4);  // past the magic: the first page's header
        bytes << std::string(12, '\xff');
    }
    EXPECT_THROW_WITH(read_all(file, FileFormat::parquet), CorruptData, "pages.parquet");
    EXPECT_THROW_WITH(static_cast<void>(ParquetRowGroups(file).read(0)), CorruptData, "pages.parquet");
}

TEST(ArrowFile, ANullEntryOfADictionaryIsANullRow) {
    test::TemporaryDirectory directory;
    arrow::Int32Builder indices;
    arrow::StringBuilder entries;
    ASSERT_TRUE(indices.AppendValues({0, 1, 0}).ok());
    ASSERT_TRUE(entries.Append("a").ok());
    ASSERT_TRUE(entries.AppendNull().ok());
    auto const dictionary =
        arrow::DictionaryArray::FromArrays(indices.Finish().ValueOrDie(), entries.Finish().ValueOrDie()).ValueOrDie();
    write_arrow(arrow::Table::Make(arrow::schema({arrow::field("s", dictionary->type())}), {dictionary}),
                directory.path() / "dictionary.arrow");
    auto const read = read_all(directory.path() / "dictionary.arrow", FileFormat::arrow);
    ASSERT_EQ(read.num_rows(), 3u);
    EXPECT_EQ(read.column(0).string(0), "a");
    EXPECT_TRUE(read.column(0).is_null(1));
    EXPECT_EQ(read.column(0).string(2), "a");
}

TEST(ArrowFile, StringOffsetsThatDecreaseOrRunPastTheirDataAreCorruptDataNamingTheFile) {
    test::TemporaryDirectory directory;
    for (auto const last : {1, 7, 100'000'000}) {
        std::vector<std::int32_t> const offsets{0, 3, last};
        auto const strings = arrow::MakeArray(arrow::ArrayData::Make(
            arrow::utf8(), 2, {nullptr, arrow::Buffer::Wrap(offsets), arrow::Buffer::FromString("abcdef")}, 0));
        auto const file = directory.path() / "offsets.arrow";
        write_arrow(arrow::Table::Make(arrow::schema({arrow::field("s", arrow::utf8())}), {strings}), file);
        EXPECT_THROW_WITH(read_all(file, FileFormat::arrow), CorruptData, "offsets.arrow") << "last offset " << last;
    }
}

TEST(ArrowFile, AnIpcStreamIsReadAsAFileIs) {
    test::TemporaryDirectory directory;
    auto const rows = table::test::random_table(3000, 5, 0.1, 40, table::test::RandomStrings::utf8);
    auto const as_file = directory.path() / "rows.arrow";
    auto writer = create_table_file(as_file, FileFormat::arrow, rows.schema());
    writer->write(rows.slice(0, 1000));
    writer->write(rows.slice(1000, 2000));
    writer->close();
    auto const stream = directory.path() / "rows.arrows";
    {
        auto const in = arrow::io::ReadableFile::Open(as_file.string()).ValueOrDie();
        auto const batches = arrow::ipc::RecordBatchFileReader::Open(in).ValueOrDie();
        auto const out = arrow::io::FileOutputStream::Open(stream.string()).ValueOrDie();
        auto const stream_writer = arrow::ipc::MakeStreamWriter(out, batches->schema()).ValueOrDie();
        for (int index = 0; index < batches->num_record_batches(); ++index) {
            ASSERT_TRUE(stream_writer->WriteRecordBatch(*batches->ReadRecordBatch(index).ValueOrDie()).ok());
        }
        ASSERT_TRUE(stream_writer->Close().ok());
        ASSERT_TRUE(out->Close().ok());
    }
    auto const reader = open_table_file(stream, FileFormat::arrow);
    EXPECT_EQ(reader->rows(), std::nullopt) << "a stream does not count its rows";
    EXPECT_EQ(reader->schema(), rows.schema());
    std::vector<Table> tables;
    while (auto table = reader->read()) {
        tables.push_back(std::move(*table));
    }
    ASSERT_EQ(tables.size(), 2u);
    EXPECT_EQ(Table::concatenate(tables), rows);
    EXPECT_EQ(open_table_file(as_file, FileFormat::arrow)->rows(), 3000u);

    std::filesystem::resize_file(stream, std::filesystem::file_size(stream) / 2);
    auto const truncated = open_table_file(stream, FileFormat::arrow);
    auto const read_to_end = [&] {
        while (truncated->read()) {
        }
    };
    EXPECT_THROW_WITH(read_to_end(), CorruptData, "rows.arrows");
}

TEST(ArrowFile, AFileThatIsNotArrowIsCorruptDataNamingIt) {
    test::TemporaryDirectory directory;
    auto const garbage = directory.path() / "garbage.arrow";
    std::ofstream(garbage) << "not an arrow file at all";
    EXPECT_THROW_WITH(static_cast<void>(open_table_file(garbage, FileFormat::arrow)), CorruptData,
                      "'" + garbage.string() + "' is not a readable Arrow IPC file");
}

TEST(TableFile, ParquetAndArrowRefuseAStringThatIsNotUtf8NamingItsColumnAndRowAndWriteTheRest) {
    test::TemporaryDirectory directory;
    Schema const schema({{"id", DataType::int64}, {"name", DataType::string}});
    auto const rows_of = [&](std::initializer_list<std::string_view> names) {
        TableBuilder builder(schema);
        std::int64_t id = 0;
        for (auto const name : names) {
            builder.column(0).append(id++);
            builder.column(1).append(name);
        }
        return builder.finish();
    };
    // Latin-1's é; a character cut between two strings; UTF-8's é, a whole one.
    auto const latin1 = rows_of({"caf\xc3\xa9", "caf\xe9"});
    auto const cut = rows_of({"caf\xc3", "\xa9"});
    auto const good = rows_of({"caf\xc3\xa9", "\xe2\x82\xac", ""});
    for (auto const format : {FileFormat::parquet, FileFormat::arrow}) {
        auto const file = directory.path() / ("names" + std::string(extension_of(format)));
        auto writer = create_table_file(file, format, schema);
        EXPECT_THROW_WITH(writer->write(latin1.slice(0, latin1.num_rows())), InvalidArgument,
                          "column 'name' holds a string that is not UTF-8 (row 1 of the rows being written to '"
                              + file.string() + "')");
        EXPECT_THROW_WITH(writer->write(cut.slice(0, cut.num_rows())), InvalidArgument, "(row 0 of the rows");
        writer->write(good.slice(0, good.num_rows()));
        writer->close();
        EXPECT_EQ(read_all(file, format), good) << "the writer goes on after a refused table";
    }
    // A column name, before the file is made.
    for (auto const format : {FileFormat::parquet, FileFormat::arrow}) {
        auto const file = directory.path() / ("named" + std::string(extension_of(format)));
        EXPECT_THROW_WITH(static_cast<void>(create_table_file(file, format, Schema({{"caf\xe9", DataType::int64}}))),
                          InvalidArgument, "the column name 'caf\xe9' is not UTF-8");
        EXPECT_FALSE(std::filesystem::exists(file));
    }
    // Bytes under a null are not written, and not checked: row 1 is null over Latin-1's é.
    std::int32_t const offsets[] = {0, 4, 5};
    auto const under_null = arrow::MakeArray(arrow::ArrayData::Make(
        arrow::utf8(), 2,
        {arrow::Buffer::FromString(std::string(1, '\x01')),
         arrow::Buffer::FromString(std::string(reinterpret_cast<char const*>(offsets), sizeof offsets)),
         arrow::Buffer::FromString("abcd\xe9")},
        1));
    auto const batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("name", arrow::utf8())}), 2, {under_null});
    ArrowSchema exported_schema;
    ArrowArray exported_array;
    ASSERT_TRUE(arrow::ExportRecordBatch(*batch, &exported_array, &exported_schema).ok());
    auto const with_null = table::import_table(&exported_schema, &exported_array);
    ASSERT_TRUE(with_null.column(0).is_null(1));
    auto const file = directory.path() / "under_null.parquet";
    auto writer = create_table_file(file, FileFormat::parquet, with_null.schema());
    writer->write(with_null.slice(0, with_null.num_rows()));
    writer->close();
    EXPECT_EQ(read_all(file, FileFormat::parquet), with_null);
}

TEST(TableFile, UnknownCompressionIsAnInvalidArgumentListingTheCodecs) {
    test::TemporaryDirectory directory;
    WriteOptions options;
    options.compression = "brotli";
    EXPECT_THROW_WITH(static_cast<void>(create_table_file(directory.path() / "x.parquet", FileFormat::parquet,
                                                          table::test::every_type_schema(), options)),
                      InvalidArgument, "unknown compression 'brotli'; Parquet files take none,zstd,lz4,snappy,gzip");
    options.compression = "snappy";
    EXPECT_THROW_WITH(static_cast<void>(create_table_file(directory.path() / "x.arrow", FileFormat::arrow,
                                                          table::test::every_type_schema(), options)),
                      InvalidArgument, "Arrow IPC files take none,zstd,lz4");
}

TEST(TableFile, ABadOptionIsAnInvalidArgumentThatLeavesTheFileAsItWas) {
    test::TemporaryDirectory directory;
    auto const existing = directory.path() / "existing";
    auto const refused = [&](FileFormat format, WriteOptions const& options, std::string const& message) {
        std::ofstream(existing) << "kept";
        auto const kept = std::filesystem::last_write_time(existing);
        EXPECT_THROW_WITH(static_cast<void>(create_table_file(existing, format, table::test::every_type_schema(),
                                                              options)),
                          InvalidArgument, message);
        EXPECT_EQ(std::filesystem::file_size(existing), 4U) << message;
        EXPECT_EQ(std::filesystem::last_write_time(existing), kept) << message;
    };
    WriteOptions options;
    options.compression = "brotli";
    refused(FileFormat::parquet, options, "unknown compression 'brotli'");
    options.compression = "zstd";
    options.compression_level = 23;
    refused(FileFormat::parquet, options, "compression level 23 is out of zstd's range");
    refused(FileFormat::arrow, options, "compression level 23 is out of zstd's range");
    options.compression = "gzip";
    options.compression_level = 0;
    refused(FileFormat::parquet, options, "compression level 0 is out of gzip's range");
    for (auto const* codec : {"none", "snappy"}) {
        options.compression = codec;
        options.compression_level = 1;
        refused(FileFormat::parquet, options, "compression '" + std::string(codec) + "' takes no level");
    }
    options = {};
    options.row_group_rows = 0;
    refused(FileFormat::parquet, options, "row_group_rows is 0; a Parquet row group holds 1 to");

    // A CSV header whose name needs the quotes the dialect lacks.
    std::ofstream(existing) << "kept";
    options = {};
    options.csv.quote = std::nullopt;
    EXPECT_THROW_WITH(static_cast<void>(create_table_file(existing, FileFormat::csv,
                                                          Schema({{"a,b", DataType::int64}}), options)),
                      InvalidArgument, "without quoting");
    EXPECT_EQ(std::filesystem::file_size(existing), 4U);

    options = {};
    options.compression_level = -5;
    auto writer = create_table_file(directory.path() / "fast.parquet", FileFormat::parquet,
                                    table::test::every_type_schema(), options);
    writer->write(edge_values());
    writer->close();
    EXPECT_EQ(read_all(directory.path() / "fast.parquet", FileFormat::parquet), edge_values());
}
