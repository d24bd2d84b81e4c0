#include <spillway/table/column_builder.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include <common/error_matchers.hpp>
#include <common/temporary_directory.hpp>

#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/host_allocator.hpp>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::table;

namespace {

ColumnBuffer int32_bytes(std::vector<std::int32_t> const& values) {
    ColumnBuffer buffer(values.size() * sizeof(std::int32_t));
    std::memcpy(buffer.data(), values.data(), buffer.size());
    return buffer;
}

ColumnBuffer text_bytes(std::string_view text) {
    ColumnBuffer buffer(text.size());
    std::memcpy(buffer.data(), text.data(), text.size());
    return buffer;
}

Column int64_column(std::vector<std::optional<std::int64_t>> const& values) {
    ColumnBuilder builder(DataType::int64);
    for (auto const& value : values) {
        value ? builder.append(*value) : builder.append_null();
    }
    return builder.finish();
}

Column string_column(std::vector<std::optional<std::string_view>> const& values) {
    ColumnBuilder builder(DataType::string);
    for (auto const& value : values) {
        value ? builder.append(*value) : builder.append_null();
    }
    return builder.finish();
}

}  // namespace

TEST(ColumnBuilder, AppendsValuesAndNullsOfEachType) {
    ColumnBuilder int32(DataType::int32);
    int32.append(std::int32_t{-7});
    int32.append_null();
    int32.append(std::int32_t{9});
    auto const ints = int32.finish();
    EXPECT_EQ(ints.size(), 3u);
    EXPECT_EQ(ints.null_count(), 1u);
    EXPECT_EQ(ints.values<std::int32_t>()[0], -7);
    EXPECT_TRUE(ints.is_null(1));
    EXPECT_EQ(ints.values<std::int32_t>()[2], 9);

    ColumnBuilder date(DataType::date32);
    date.append(std::int32_t{19000});
    EXPECT_EQ(date.finish().values<std::int32_t>()[0], 19000);

    ColumnBuilder float64(DataType::float64);
    float64.append(2.5);
    EXPECT_EQ(float64.finish().values<double>()[0], 2.5);

    auto const strings = string_column({"alpha", std::nullopt, "", "gamma"});
    EXPECT_EQ(strings.size(), 4u);
    EXPECT_EQ(strings.null_count(), 1u);
    EXPECT_EQ(strings.string(0), "alpha");
    EXPECT_TRUE(strings.is_null(1));
    EXPECT_FALSE(strings.is_null(2));
    EXPECT_EQ(strings.string(2), "");
    EXPECT_EQ(strings.string(3), "gamma");
    EXPECT_EQ(strings.characters(), "alphagamma");
}

TEST(ColumnBuilder, CreatesTheValidityBitmapOnlyWhenANullIsAppended) {
    auto const dense = int64_column({1, 2, 3});
    EXPECT_TRUE(dense.validity_buffer().empty());
    EXPECT_EQ(dense.null_count(), 0u);

    // The first null comes after more than a byte's worth of valid rows.
    std::vector<std::optional<std::int64_t>> values(13, std::int64_t{5});
    values.push_back(std::nullopt);
    values.push_back(std::int64_t{6});
    auto const sparse = int64_column(values);
    ASSERT_EQ(sparse.validity_buffer().size(), 2u);
    for (std::size_t row = 0; row < sparse.size(); ++row) {
        EXPECT_EQ(sparse.is_null(row), row == 13) << row;
    }
}

TEST(ColumnBuilder, TruncateRemovesTheLastRowsWithTheirNullsAndCharacters) {
    ColumnBuilder strings(DataType::string);
    strings.append("kept");
    strings.append_null();
    strings.append("dropped");
    strings.append_null();
    strings.truncate(2);
    strings.append("after");
    auto const column = strings.finish();
    ASSERT_EQ(column.size(), 3u);
    EXPECT_EQ(column.null_count(), 1u);
    EXPECT_EQ(column.string(0), "kept");
    EXPECT_TRUE(column.is_null(1));
    EXPECT_EQ(column.string(2), "after");
    EXPECT_EQ(column.characters(), "keptafter");

    ColumnBuilder ints(DataType::int64);
    ints.append(std::int64_t{1});
    ints.append_null();
    ints.truncate(1);
    ints.append(std::int64_t{2});
    auto const dense = ints.finish();
    ASSERT_EQ(dense.size(), 2u);
    EXPECT_EQ(dense.null_count(), 0u);
    EXPECT_TRUE(dense.validity_buffer().empty()) << "no null is left, so no bitmap";
    EXPECT_EQ(dense.values<std::int64_t>()[1], 2);
}

TEST(ColumnBuilder, IsEmptyAndReusableAfterFinish) {
    ColumnBuilder builder(DataType::string);
    builder.append("first");
    builder.append_null();
    auto const first = builder.finish();
    EXPECT_EQ(builder.size(), 0u);
    builder.append("second");
    auto const second = builder.finish();
    EXPECT_EQ(first.size(), 2u);
    EXPECT_EQ(second.size(), 1u);
    EXPECT_EQ(second.null_count(), 0u);
    EXPECT_EQ(second.string(0), "second");
}

TEST(ColumnBuilder, RejectsValuesOfAnotherType) {
    ColumnBuilder builder(DataType::int32);
    EXPECT_THROW_WITH(builder.append(std::int64_t{1}), InvalidArgument, "int32 column");
    EXPECT_THROW_WITH(builder.append(1.0), InvalidArgument, "int32 column");
    EXPECT_THROW_WITH(builder.append(std::string_view("x")), InvalidArgument, "cannot append a string");
    auto const column = builder.finish();
    EXPECT_THROW_WITH(static_cast<void>(column.values<std::int64_t>()), InvalidArgument, "int32 column");
    EXPECT_THROW_WITH(static_cast<void>(column.offsets()), InvalidArgument, "no string offsets");
}

TEST(Column, SliceCopiesRowsAndNullsFromUnalignedOffsets) {
    std::vector<std::optional<std::string_view>> values;
    for (int row = 0; row < 30; ++row) {
        values.push_back(row % 4 == 1 ? std::nullopt : std::optional<std::string_view>(row % 2 ? "odd" : "even"));
    }
    auto const column = string_column(values);
    auto const slice = column.slice(3, 20);
    std::vector<std::optional<std::string_view>> expected(values.begin() + 3, values.begin() + 23);
    EXPECT_EQ(slice, string_column(expected));
    EXPECT_EQ(slice.offsets().front(), 0);
    EXPECT_EQ(column.slice(30, 0).size(), 0u);
    EXPECT_THROW_WITH(static_cast<void>(column.slice(25, 6)), InvalidArgument, "slice of rows [25, 31)");
}

TEST(Column, TakeGathersRowsInAnyOrderWithRepeats) {
    auto const numbers = int64_column({10, std::nullopt, 30, 40});
    std::vector<std::uint32_t> const rows{3, 1, 3, 0};
    EXPECT_EQ(numbers.take(rows), int64_column({40, std::nullopt, 40, 10}));
    auto const strings = string_column({"a", "bb", std::nullopt, "dddd"});
    EXPECT_EQ(strings.take(rows), string_column({"dddd", "bb", "dddd", "a"}));
    EXPECT_EQ(strings.take({}).size(), 0u);
}

TEST(Column, TakeCopiesRunsOfFollowingRowsAsWellAsSingleOnes) {
    std::vector<std::string> texts;
    std::vector<std::optional<std::string_view>> values;
    for (std::size_t row = 0; row < 40; ++row) {
        texts.emplace_back(row % 5, static_cast<char>('a' + row % 26));
    }
    for (std::size_t row = 0; row < 40; ++row) {
        values.push_back(row % 9 == 4 ? std::nullopt : std::optional<std::string_view>(texts[row]));
    }
    // Runs of several rows, rows alone, a run cut by a repeat, and one to the end.
    std::vector<std::uint32_t> const rows{0, 1, 2, 3, 7, 20, 21, 21, 22, 5, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39};
    std::vector<std::optional<std::string_view>> expected;
    for (auto const row : rows) {
        expected.push_back(values[row]);
    }
    EXPECT_EQ(string_column(values).take(rows), string_column(expected));
}

TEST(Column, TakeCopiesARunOfEmptyStrings) {
    auto const empty = string_column({"", "", ""});
    std::vector<std::uint32_t> const rows{0, 1, 2};
    EXPECT_EQ(empty.take(rows), string_column({"", "", ""}));
}

TEST(Column, TakeRejectsARowOutOfRange) {
    auto const numbers = int64_column({1, 2});
    std::vector<std::uint32_t> const rows{0, 2};
    EXPECT_THROW_WITH(static_cast<void>(numbers.take(rows)), InvalidArgument, "taking row 2 of a column of 2 rows");
}

TEST(Column, FromBuffersAcceptsValidBuffersAndCountsNulls) {
    ColumnBuffer validity{std::byte{0b101}};
    auto const column = Column::from_buffers(DataType::string, 3, std::move(validity), int32_bytes({0, 2, 2, 5}),
                                             text_bytes("abcde"));
    EXPECT_EQ(column, string_column({"ab", std::nullopt, "cde"}));
}

TEST(Column, FromBuffersRejectsInconsistentBuffers) {
    EXPECT_THROW_WITH(Column::from_buffers(DataType::int32, 3, {}, int32_bytes({1, 2}), {}), InvalidArgument,
                      "int32 data buffer of 8 bytes for 3 rows, which need 12");
    EXPECT_THROW_WITH(Column::from_buffers(DataType::int32, 2, ColumnBuffer(2), int32_bytes({1, 2}), {}),
                      InvalidArgument, "validity bitmap of 2 bytes for 2 rows, which need 1");
    EXPECT_THROW_WITH(Column::from_buffers(DataType::int32, 2, {}, int32_bytes({1, 2}), text_bytes("x")),
                      InvalidArgument, "only string columns have characters");
    EXPECT_THROW_WITH(Column::from_buffers(DataType::string, 2, {}, int32_bytes({1, 2, 3}), text_bytes("abc")),
                      InvalidArgument, "start at 1 instead of 0");
    EXPECT_THROW_WITH(Column::from_buffers(DataType::string, 2, {}, int32_bytes({0, 3, 2}), text_bytes("abc")),
                      InvalidArgument, "decrease at row 1");
    EXPECT_THROW_WITH(Column::from_buffers(DataType::string, 2, {}, int32_bytes({0, 1, 2}), text_bytes("abc")),
                      InvalidArgument, "end at 2 but there are 3 bytes");
    EXPECT_THROW_WITH(Column::from_buffers(DataType::string, 2, {}, int32_bytes({0, 1}), text_bytes("a")),
                      InvalidArgument, "offsets buffer of 8 bytes for 2 rows, which need 12");
    EXPECT_THROW_WITH(Column::from_buffers(DataType::boolean, 3, {}, text_bytes(std::string_view("\1\0\2", 3)), {}),
                      InvalidArgument, "boolean value 2 at row 2; a boolean is 0 or 1");
    ColumnBuffer second_null{std::byte{0b101}};
    auto const seven_under_a_null = text_bytes(std::string_view("\1\7\0", 3));
    EXPECT_EQ(Column::from_buffers(DataType::boolean, 3, std::move(second_null), seven_under_a_null, {}).null_count(),
              1u)
        << "what lies under a null is not looked at";
}

TEST(Column, EqualityIgnoresValuesUnderNulls) {
    ColumnBuffer validity_a{std::byte{0b01}};
    ColumnBuffer validity_b{std::byte{0b01}};
    auto const a = Column::from_buffers(DataType::int32, 2, std::move(validity_a), int32_bytes({7, 100}), {});
    auto const b = Column::from_buffers(DataType::int32, 2, std::move(validity_b), int32_bytes({7, -100}), {});
    EXPECT_EQ(a, b);
    EXPECT_NE(a, Column::from_buffers(DataType::int32, 2, {}, int32_bytes({7, 100}), {}));
}

TEST(Column, Float64EqualityComparesBitPatterns) {
    auto const column_of = [](double value) {
        ColumnBuilder builder(DataType::float64);
        builder.append(value);
        return builder.finish();
    };
    auto const nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(column_of(nan), column_of(nan));
    EXPECT_NE(column_of(0.0), column_of(-0.0));
    EXPECT_NE(column_of(1.0), column_of(2.0));
}

TEST(Column, ItsBuffersChargeTheHostResourceCurrentWhereTheyAreBuilt) {
    test::TemporaryDirectory const root;
    memory::MemoryConfig config;
    config.spill_directory = root.path();
    memory::BufferResource resource(config);
    std::optional<Column> column;
    {
        memory::ScopedHostResource const scope(&resource);
        column = int64_column({1, std::nullopt, 3});
    }
    auto const used = resource.memory_used(memory::MemoryType::HOST);
    EXPECT_GE(used, column->byte_size());
    // A gather made outside the scope is the heap's, whatever its source's.
    auto const taken = column->take(std::vector<std::uint32_t>{2, 0});
    EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), used);
    column.reset();
    EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), 0U);
    EXPECT_EQ(taken, int64_column({3, 1}));
}

TEST(Column, ANullStringIsEmptyWhateverCharactersLieUnderIt) {
    ColumnBuffer validity(1, std::byte{0});  // row 0 null
    ColumnBuffer offsets(2 * sizeof(std::int32_t));
    std::int32_t const ends[] = {0, 3};
    std::memcpy(offsets.data(), ends, sizeof ends);
    ColumnBuffer characters(3);
    std::memcpy(characters.data(), "abc", 3);
    auto const column = Column::from_buffers(DataType::string, 1, std::move(validity), std::move(offsets),
                                             std::move(characters));
    ASSERT_TRUE(column.is_null(0));
    EXPECT_EQ(column.string(0), "");
}
