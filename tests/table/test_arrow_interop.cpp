#include <spillway/table/arrow_interop.hpp>

#include <cstring>
#include <string>
#include <thread>

#include <common/error_matchers.hpp>

#include <gtest/gtest.h>

#include "random_table.hpp"

using namespace spillway;
using namespace spillway::table;
using spillway::table::test::random_table;

namespace {

Table round_trip(Table table) {
    ArrowSchema schema;
    ArrowArray array;
    export_table(std::move(table), &schema, &array);
    return import_table(&schema, &array);
}

/// A hand-made Arrow producer for import tests: its structures point into
/// its own buffers, and it counts the releases.
struct HandMadeArray {
    std::vector<std::uint8_t> validity;
    std::vector<std::int32_t> offsets;
    std::string text;
    std::vector<std::int64_t> numbers;
    std::vector<void const*> string_buffers;
    std::vector<void const*> number_buffers;
    std::vector<void const*> struct_buffers{nullptr};
    ArrowSchema string_schema{};
    ArrowSchema number_schema{};
    std::vector<ArrowSchema*> schema_children;
    ArrowSchema schema{};
    ArrowArray string_array{};
    ArrowArray number_array{};
    std::vector<ArrowArray*> array_children;
    ArrowArray array{};
    int releases = 0;

    static void release_schema(ArrowSchema* released) {
        ++static_cast<HandMadeArray*>(released->private_data)->releases;
        released->release = nullptr;
    }
    static void release_array(ArrowArray* released) {
        ++static_cast<HandMadeArray*>(released->private_data)->releases;
        released->release = nullptr;
    }

    /// Rows "r0".."r9" and 0..90 step 10, rows 2 and 5 null in the strings;
    /// the struct starts at `struct_offset`, the columns at their own offsets.
    explicit HandMadeArray(std::int64_t struct_offset, std::int64_t struct_length, char const* number_format = "l") {
        validity = {0b11011011, 0b11};
        for (int row = 0; row < 10; ++row) {
            offsets.push_back(static_cast<std::int32_t>(text.size()));
            if (row != 2 && row != 5) {
                text += "r" + std::to_string(row);
            }
            numbers.push_back(row * 10);
        }
        offsets.push_back(static_cast<std::int32_t>(text.size()));
        string_buffers = {validity.data(), offsets.data(), text.data()};
        number_buffers = {nullptr, numbers.data() + 1};  // the number column starts one value in
        string_schema = {"u", "name", nullptr, ARROW_FLAG_NULLABLE, 0, nullptr, nullptr, nullptr, nullptr};
        number_schema = {number_format, "value", nullptr, 0, 0, nullptr, nullptr, nullptr, nullptr};
        schema_children = {&string_schema, &number_schema};
        schema = {"+s", "", nullptr, 0, 2, schema_children.data(), nullptr, &release_schema, this};
        string_array = {10, 2, 0, 3, 0, string_buffers.data(), nullptr, nullptr, nullptr, nullptr};
        number_array = {9, 0, 0, 2, 0, number_buffers.data(), nullptr, nullptr, nullptr, nullptr};
        array_children = {&string_array, &number_array};
        array = {struct_length, -1, struct_offset, 1, 2, struct_buffers.data(), array_children.data(), nullptr,
                 &release_array, this};
    }
};

}  // namespace

TEST(ArrowInterop, RoundTripsEveryTypeWithNulls) {
    for (std::size_t const rows : {0, 1, 9, 500}) {
        auto const table = random_table(rows, rows + 7, 0.25);
        EXPECT_EQ(round_trip(table), table) << rows;
    }
    EXPECT_EQ(round_trip(random_table(100, 3, 0.0)), random_table(100, 3, 0.0));
    EXPECT_EQ(round_trip(Table()), Table());
}

TEST(ArrowInterop, RoundTripsLargeStrings) {
    TableBuilder builder(Schema({{"blob", DataType::string}}));
    std::string const large(3 << 20, 'q');
    builder.column(0).append(large);
    builder.column(0).append_null();
    builder.column(0).append("tail");
    auto const table = builder.finish();
    EXPECT_EQ(round_trip(table), table);
}

TEST(ArrowInterop, ExportsTheSpecifiedFormatsWithoutCopying) {
    auto table = random_table(64, 4, 0.5);
    std::vector<void const*> data_addresses;
    for (auto const& column : table.columns()) {
        data_addresses.push_back(column.data_buffer().data());
    }
    auto const text_address = table.column(4).character_buffer().data();
    ArrowSchema schema;
    ArrowArray array;
    export_table(std::move(table), &schema, &array);

    EXPECT_STREQ(schema.format, "+s");
    ASSERT_EQ(schema.n_children, 12);
    std::vector<std::string> formats;
    for (std::int64_t index = 0; index < schema.n_children; ++index) {
        formats.emplace_back(schema.children[index]->format);
        EXPECT_EQ(schema.children[index]->flags, ARROW_FLAG_NULLABLE);
    }
    EXPECT_EQ(formats, (std::vector<std::string>{"i", "l", "g", "tdD", "u", "b", "tsm:", "tsu:", "tsn:", "tsm:UTC",
                                                 "tsu:UTC", "tsn:UTC"}));
    EXPECT_STREQ(schema.children[4]->name, "text");
    EXPECT_EQ(array.length, 64);
    EXPECT_EQ(array.n_buffers, 1);
    for (std::int64_t index = 0; index < array.n_children; ++index) {
        if (index != 5) {  // Arrow holds booleans as bits, spillway as bytes: the one copy
            EXPECT_EQ(array.children[index]->buffers[1], data_addresses[static_cast<std::size_t>(index)]);
        }
        EXPECT_GT(array.children[index]->null_count, 0);
    }
    EXPECT_EQ(array.children[4]->n_buffers, 3);
    EXPECT_EQ(array.children[4]->buffers[2], text_address);
    array.release(&array);
    schema.release(&schema);
    EXPECT_EQ(array.release, nullptr);
    EXPECT_EQ(schema.release, nullptr);
}

TEST(ArrowInterop, AChildMovedOutOutlivesItsReleasedParentOnAnotherThread) {
    TableBuilder builder(Schema({{"word", DataType::string}, {"n", DataType::int32}}));
    builder.column(0).append("kept alive");
    builder.column(1).append(std::int32_t{5});
    ArrowSchema schema;
    ArrowArray array;
    export_table(builder.finish(), &schema, &array);
    ArrowArray child = *array.children[0];  // a move, as the specification describes it
    array.children[0]->release = nullptr;
    array.release(&array);
    schema.release(&schema);
    std::string seen;
    std::thread consumer([&] {
        auto const* offsets = static_cast<std::int32_t const*>(child.buffers[1]);
        seen.assign(static_cast<char const*>(child.buffers[2]) + offsets[0], static_cast<std::size_t>(offsets[1]));
        child.release(&child);
    });
    consumer.join();
    EXPECT_EQ(seen, "kept alive");
    EXPECT_EQ(child.release, nullptr);
}

TEST(ArrowInterop, ImportHonoursOffsetsAndUnknownNullCountsAndReleasesBoth) {
    HandMadeArray producer(3, 5);
    auto const table = import_table(&producer.schema, &producer.array);
    EXPECT_EQ(producer.releases, 2);
    ASSERT_EQ(table.num_rows(), 5u);
    auto const& names = table.column("name");
    EXPECT_EQ(names.string(0), "r3");
    EXPECT_EQ(names.string(1), "r4");
    EXPECT_TRUE(names.is_null(2));
    EXPECT_EQ(names.string(4), "r7");
    EXPECT_EQ(names.null_count(), 1u);
    auto const values = table.column("value").values<std::int64_t>();
    EXPECT_EQ(std::vector<std::int64_t>(values.begin(), values.end()), (std::vector<std::int64_t>{40, 50, 60, 70, 80}));
}

TEST(ArrowInterop, ImportRejectsUnsupportedInputAndStillReleasesIt) {
    HandMadeArray float32(0, 5, "f");
    EXPECT_THROW_WITH(static_cast<void>(import_table(&float32.schema, &float32.array)), InvalidArgument,
                      "column 'value' has Arrow format 'f'");
    EXPECT_EQ(float32.releases, 2);

    HandMadeArray too_long(6, 4);
    EXPECT_THROW_WITH(static_cast<void>(import_table(&too_long.schema, &too_long.array)), InvalidArgument,
                      "column 'value' has 9 rows but the struct needs 10");
    EXPECT_EQ(too_long.releases, 2);

    HandMadeArray not_a_struct(0, 5);
    not_a_struct.schema.format = "l";
    EXPECT_THROW_WITH(static_cast<void>(import_table(&not_a_struct.schema, &not_a_struct.array)), InvalidArgument,
                      "a table is imported from a struct (+s)");

    HandMadeArray released(0, 5);
    released.array.release = nullptr;
    EXPECT_THROW_WITH(static_cast<void>(import_table(&released.schema, &released.array)), InvalidArgument,
                      "already released");
    EXPECT_EQ(released.releases, 1);
}

TEST(ArrowInterop, ImportRejectsNullStructRows) {
    HandMadeArray producer(0, 5);
    std::uint8_t const struct_validity = 0b11101;
    producer.struct_buffers[0] = &struct_validity;
    EXPECT_THROW_WITH(static_cast<void>(import_table(&producer.schema, &producer.array)), InvalidArgument,
                      "null rows, which a table cannot hold");
}

TEST(ArrowInterop, ASharedTableIsExportedAnyNumberOfTimesWithoutACopy) {
    auto const shared = std::make_shared<Table const>(random_table(100, 5));
    ArrowSchema schemas[2];
    ArrowArray arrays[2];
    export_table(shared, &schemas[0], &arrays[0]);
    export_table(shared, &schemas[1], &arrays[1]);
    EXPECT_EQ(arrays[0].children[0]->buffers[1], arrays[1].children[0]->buffers[1]) << "both point into the table";
    EXPECT_GT(shared.use_count(), 1) << "the exports keep the table alive";
    EXPECT_EQ(import_table(&schemas[0], &arrays[0]), *shared);
    EXPECT_EQ(import_table(&schemas[1], &arrays[1]), *shared);
    EXPECT_EQ(shared.use_count(), 1) << "each release let go of the table";
    EXPECT_THROW_WITH(export_table(std::shared_ptr<Table const>(), &schemas[0], &arrays[0]), InvalidArgument,
                      "exporting a null table");
}

TEST(ArrowInterop, ATableExportedWithoutItsSchemaImportsWithTheSchemaExportedApart) {
    for (std::size_t const rows : {0, 70}) {
        auto const table = random_table(rows, 2, 0.2);
        ArrowArray array;
        export_array(table, &array);
        EXPECT_EQ(array.length, static_cast<std::int64_t>(rows));
        EXPECT_EQ(array.n_children, 12);
        ArrowSchema schema;
        export_schema(table.schema(), &schema);
        EXPECT_EQ(import_table(&schema, &array), table);
    }
    EXPECT_THROW_WITH(export_array(random_table(1, 1), nullptr), InvalidArgument, "null ArrowArray");
}
