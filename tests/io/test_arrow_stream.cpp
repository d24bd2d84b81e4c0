#include <spillway/io/arrow_stream.hpp>

#include <arrow/api.h>
#include <arrow/c/bridge.h>

#include <spillway/core/error.hpp>

#include <common/error_matchers.hpp>

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::io;

namespace {

/// A stream of `batches` as an Arrow C++ producer exports it.
ArrowArrayStream export_stream(std::shared_ptr<arrow::Schema> const& schema,
                               std::vector<std::shared_ptr<arrow::RecordBatch>> batches) {
    auto const reader = arrow::RecordBatchReader::Make(std::move(batches), schema).ValueOrDie();
    ArrowArrayStream stream;
    EXPECT_TRUE(arrow::ExportRecordBatchReader(reader, &stream).ok());
    return stream;
}

std::shared_ptr<arrow::RecordBatch> batch(std::shared_ptr<arrow::Schema> const& schema, std::vector<std::int8_t> keys,
                                          std::vector<std::string> const& names) {
    arrow::Int8Builder key_builder;
    EXPECT_TRUE(key_builder.AppendValues(keys).ok());
    arrow::LargeStringBuilder name_builder;
    EXPECT_TRUE(name_builder.AppendValues(names).ok());
    return arrow::RecordBatch::Make(schema, static_cast<std::int64_t>(keys.size()),
                                    {key_builder.Finish().ValueOrDie(), name_builder.Finish().ValueOrDie()});
}

}  // namespace

TEST(ArrowStream, ReadsEveryBatchInOrderWithItsColumnsConverted) {
    auto const schema = arrow::schema({arrow::field("key", arrow::int8()), arrow::field("name", arrow::large_utf8())});
    auto stream = export_stream(schema, {batch(schema, {1, 2}, {"a", "b"}), batch(schema, {3}, {"c"})});
    auto const reader = open_arrow_stream(&stream, "test data");
    EXPECT_EQ(stream.release, nullptr) << "the reader took the stream over";
    EXPECT_EQ(reader->schema().to_string(), "key:int32, name:string");
    EXPECT_EQ(reader->rows(), std::nullopt);
    auto const first = reader->read();
    ASSERT_TRUE(first);
    EXPECT_EQ(first->num_rows(), 2U);
    EXPECT_EQ(first->column(0).values<std::int32_t>()[1], 2);
    auto const second = reader->read();
    ASSERT_TRUE(second);
    EXPECT_EQ(second->column(1).string(0), "c");
    EXPECT_FALSE(reader->read());
}

TEST(ArrowStream, RefusesANullOrReleasedStreamAndATypeItCannotRead) {
    EXPECT_THROW_WITH(static_cast<void>(open_arrow_stream(nullptr)), InvalidArgument, "null or already released");
    ArrowArrayStream released{};
    EXPECT_THROW_WITH(static_cast<void>(open_arrow_stream(&released, "mine")), InvalidArgument,
                      "the ArrowArrayStream of mine is null or already released");

    auto const schema = arrow::schema({arrow::field("blob", arrow::binary())});
    auto stream = export_stream(schema, {});
    EXPECT_THROW_WITH(static_cast<void>(open_arrow_stream(&stream, "blobs")), InvalidArgument,
                      "'blobs': column 'blob' has the type binary");
}

TEST(ArrowStream, ABooleanColumnAtAnOffsetThatIsNoWholeByteReadsItsOwnBits) {
    arrow::BooleanBuilder flags;
    for (int row = 0; row < 100; ++row) {
        EXPECT_TRUE((row % 5 == 4 ? flags.AppendNull() : flags.Append(row % 3 == 0)).ok());
    }
    auto const schema = arrow::schema({arrow::field("flag", arrow::boolean())});
    auto const whole = arrow::RecordBatch::Make(schema, 100, {flags.Finish().ValueOrDie()});
    auto stream = export_stream(schema, {whole->Slice(3, 90)});
    auto const reader = open_arrow_stream(&stream, "flags");
    EXPECT_EQ(reader->schema().to_string(), "flag:boolean");
    auto const table = reader->read();
    ASSERT_TRUE(table);
    ASSERT_EQ(table->num_rows(), 90U);
    auto const& flag = table->column(0);
    for (std::size_t index = 0; index < 90; ++index) {
        auto const row = index + 3;
        if (row % 5 == 4) {
            ASSERT_TRUE(flag.is_null(index)) << row;
        } else {
            ASSERT_EQ(flag.values<std::uint8_t>()[index], row % 3 == 0 ? 1 : 0) << row;
        }
    }
}

TEST(ArrowStream, ASliceOfADictionaryColumnWithNullsReadsItsOwnRows) {
    // The second read of a large batch is a slice at a nonzero offset: its
    // dictionary indices and validity bits must be read from there.
    auto const rows = static_cast<std::int64_t>(rows_per_read + 1000);
    arrow::Int32Builder indices;
    for (std::int64_t row = 0; row < rows; ++row) {
        EXPECT_TRUE((row % 7 == 3 ? indices.AppendNull() : indices.Append(static_cast<std::int32_t>(row % 3))).ok());
    }
    arrow::StringBuilder words;
    EXPECT_TRUE(words.AppendValues({"red", "green", "blue"}).ok());
    auto const type = arrow::dictionary(arrow::int32(), arrow::utf8());
    auto const tags = arrow::DictionaryArray::FromArrays(type, indices.Finish().ValueOrDie(), words.Finish().ValueOrDie())
                          .ValueOrDie();
    auto const schema = arrow::schema({arrow::field("tag", type)});
    auto stream = export_stream(schema, {arrow::RecordBatch::Make(schema, rows, {tags})});
    auto const reader = open_arrow_stream(&stream, "tags");
    std::int64_t row = 0;
    while (auto const table = reader->read()) {
        auto const& tag = table->column(0);
        for (std::size_t index = 0; index < table->num_rows(); ++index, ++row) {
            if (row % 7 == 3) {
                ASSERT_TRUE(tag.is_null(index)) << row;
            } else {
                ASSERT_EQ(tag.string(index), (std::array<std::string_view, 3>{"red", "green", "blue"}[row % 3])) << row;
            }
        }
    }
    EXPECT_EQ(row, rows);
}

TEST(ArrowStream, AProducersErrorIsAnIoErrorWithItsMessageWhateverItsCode) {
    // A Python producer's exception comes through the C interface as EINVAL,
    // which Arrow reads as Invalid: still the producer's failure, not corrupt data.
    for (auto const& status :
         {arrow::Status::IOError("the producer broke"), arrow::Status::Invalid("the producer broke")}) {
        auto const schema = arrow::schema({arrow::field("x", arrow::int64())});
        auto const failing = arrow::RecordBatchReader::MakeFromIterator(
                                 arrow::MakeFunctionIterator(
                                     [status]() -> arrow::Result<std::shared_ptr<arrow::RecordBatch>> { return status; }
                                 ),
                                 schema)
                                 .ValueOrDie();
        ArrowArrayStream stream;
        ASSERT_TRUE(arrow::ExportRecordBatchReader(failing, &stream).ok());
        auto const reader = open_arrow_stream(&stream, "broken");
        EXPECT_THROW_WITH(static_cast<void>(reader->read()), IoError, "broken failed to give its next batch: ");
        EXPECT_THROW_WITH(static_cast<void>(reader->read()), IoError, "the producer broke");
    }
}

TEST(ArrowStream, ABatchOfMoreThanRowsPerReadIsReadInSlicesOfThatMany) {
    auto const schema = arrow::schema({arrow::field("key", arrow::int8()), arrow::field("name", arrow::large_utf8())});
    auto const rows = rows_per_read + 100;
    std::vector<std::int8_t> keys(rows);
    std::vector<std::string> names(rows);
    for (std::size_t row = 0; row < rows; ++row) {
        keys[row] = static_cast<std::int8_t>(row % 100);
        names[row] = std::to_string(row);
    }
    auto stream = export_stream(schema, {batch(schema, {7}, {"first"}), batch(schema, keys, names),
                                         batch(schema, {}, {})});
    auto const reader = open_arrow_stream(&stream, "big batches");
    std::vector<std::size_t> sizes;
    std::size_t row = 0;
    auto const first = reader->read();
    ASSERT_TRUE(first);
    EXPECT_EQ(first->column(1).string(0), "first");
    while (auto const table = reader->read()) {
        sizes.push_back(table->num_rows());
        for (std::size_t index = 0; index < table->num_rows(); ++index, ++row) {
            ASSERT_EQ(table->column(1).string(index), std::to_string(row));
            ASSERT_EQ(table->column(0).values<std::int32_t>()[index], static_cast<std::int32_t>(row % 100));
        }
    }
    EXPECT_EQ(sizes, (std::vector<std::size_t>{rows_per_read, 100, 0})) << "the empty batch is read as it is";
}

namespace {

/// A producer that cannot give its schema: EINVAL, as a Python producer's
/// exception comes through the C interface.
ArrowArrayStream stream_without_a_schema() {
    ArrowArrayStream stream{};
    stream.get_schema = [](ArrowArrayStream*, ArrowSchema*) { return EINVAL; };
    stream.get_next = [](ArrowArrayStream*, ArrowArray*) { return EINVAL; };
    stream.get_last_error = [](ArrowArrayStream*) -> char const* { return "no schema here"; };
    stream.release = [](ArrowArrayStream* self) { self->release = nullptr; };
    return stream;
}

}  // namespace

TEST(ArrowStream, AProducerThatCannotGiveItsSchemaIsAnIoErrorAndItsStreamIsReleased) {
    auto stream = stream_without_a_schema();
    EXPECT_THROW_WITH(static_cast<void>(open_arrow_stream(&stream, "broken")), IoError,
                      "broken failed to give its schema: no schema here");
    EXPECT_EQ(stream.release, nullptr) << "taken, as the contract says, though it failed";
}

TEST(ArrowStream, AStreamOfArraysIsRefusedAndReleased) {
    auto const arrays = arrow::RecordBatchReader::MakeFromIterator(
                            arrow::MakeVectorIterator(std::vector<std::shared_ptr<arrow::RecordBatch>>{}),
                            arrow::schema({arrow::field("x", arrow::int64())}))
                            .ValueOrDie();
    ArrowArrayStream stream;
    ASSERT_TRUE(arrow::ExportRecordBatchReader(arrays, &stream).ok());
    // A stream of plain int64 arrays: its schema's format is "l", not "+s".
    stream.get_schema = [](ArrowArrayStream*, ArrowSchema* out) {
        return arrow::ExportType(*arrow::int64(), out).ok() ? 0 : EINVAL;
    };
    EXPECT_THROW_WITH(static_cast<void>(open_arrow_stream(&stream, "column")), InvalidArgument,
                      "column is a stream of arrays of Arrow format 'l'");
    EXPECT_EQ(stream.release, nullptr);
}
