#include <spillway/table/date32.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table/row_hash.hpp>
#include <spillway/table/table_checksum.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string_view>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include <xxhash.h>

#include <common/error_matchers.hpp>
#include <common/temporary_directory.hpp>
#include <spillway/memory/buffer_resource.hpp>

#include <gtest/gtest.h>

#include "random_table.hpp"

using namespace spillway;
using namespace spillway::table;
using spillway::table::test::random_table;

namespace {

std::vector<std::size_t> all_columns(Table const& table) {
    std::vector<std::size_t> columns(table.num_columns());
    std::iota(columns.begin(), columns.end(), std::size_t{0});
    return columns;
}

}  // namespace

TEST(RowHash, ChargedHashesAreTheSameHashesChargedToTheCurrentHostResource) {
    auto const table = random_table(10'000, 4, 0.1, 7);
    auto const columns = all_columns(table);
    spillway::test::TemporaryDirectory const root;
    memory::MemoryConfig config;
    config.spill_directory = root.path();
    memory::BufferResource resource(config);
    std::optional<ChargedRowHashes> charged;
    {
        memory::ScopedHostResource const scope(&resource);
        charged = hash_rows_charged(table, columns, 11);
    }
    EXPECT_GE(resource.memory_used(memory::MemoryType::HOST), table.num_rows() * sizeof(std::uint64_t));
    auto const hashes = hash_rows(table, columns, 11);
    EXPECT_TRUE(std::equal(charged->begin(), charged->end(), hashes.begin(), hashes.end()));
    charged.reset();
    EXPECT_EQ(resource.memory_used(memory::MemoryType::HOST), 0U);
}

TEST(RowHash, IsXxh3ChainedThroughTheSeedAsDocumented) {
    TableBuilder builder(Schema({{"key", DataType::int64}, {"name", DataType::string}}));
    builder.column(0).append(std::int64_t{42});
    builder.column(1).append("spillway");
    builder.column(0).append_null();
    builder.column(1).append_null();
    auto const table = builder.finish();
    std::vector<std::size_t> const columns{0, 1};
    auto const hashes = hash_rows(table, columns, 7);

    std::int64_t const key = 42;
    auto const first = XXH3_64bits_withSeed(&key, sizeof(key), 7);
    EXPECT_EQ(hashes[0], XXH3_64bits_withSeed("spillway", 8, first));
    auto const null_key = XXH3_64bits_withSeed(nullptr, 0, ~std::uint64_t{7});
    EXPECT_EQ(hashes[1], XXH3_64bits_withSeed(nullptr, 0, ~null_key));
}

TEST(RowHash, DependsOnlyOnTheValuesNotOnTheRowPosition) {
    auto const table = random_table(300, 11, 0.2);
    auto const columns = all_columns(table);
    auto const whole = hash_rows(table, columns);
    auto const part = hash_rows(table.slice(100, 50), columns);
    EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + 100));
}

TEST(RowHash, TellsANullFromAnEmptyString) {
    TableBuilder builder(Schema({{"text", DataType::string}}));
    builder.column(0).append("");
    builder.column(0).append_null();
    builder.column(0).append_null();
    std::vector<std::size_t> const columns{0};
    auto const hashes = hash_rows(builder.finish(), columns);
    EXPECT_NE(hashes[0], hashes[1]);
    EXPECT_EQ(hashes[1], hashes[2]);
}

namespace {

/// The hash of a one-column table holding `value`, a value of `type`.
template <typename Value>
std::uint64_t hash_of(DataType type, Value value) {
    TableBuilder builder(Schema({{"key", type}}));
    builder.column(0).append(value);
    std::vector<std::size_t> const columns{0};
    return hash_rows(builder.finish(), columns).front();
}

std::uint64_t hash_of_bytes(std::string_view bytes) { return XXH3_64bits_withSeed(bytes.data(), bytes.size(), 0); }

}  // namespace

TEST(RowHash, HashesEqualKeysEquallyWhateverTheirType) {
    auto const forty_two = hash_of(DataType::int64, std::int64_t{42});
    EXPECT_EQ(hash_of(DataType::int32, std::int32_t{42}), forty_two);
    EXPECT_EQ(hash_of(DataType::float64, 42.0), forty_two);
    EXPECT_EQ(hash_of(DataType::string, std::string_view("42")), forty_two);
    EXPECT_EQ(hash_of(DataType::string, std::string_view("-7")), hash_of(DataType::int64, std::int64_t{-7}));
    EXPECT_EQ(hash_of(DataType::string, std::string_view("0")), hash_of(DataType::int64, std::int64_t{0}));
    EXPECT_EQ(hash_of(DataType::string, std::string_view("-9223372036854775808")),
              hash_of(DataType::int64, std::numeric_limits<std::int64_t>::min()));
    EXPECT_EQ(hash_of(DataType::string, std::string_view("1995-03-15")),
              hash_of(DataType::date32, std::int32_t{9204}));
    EXPECT_EQ(hash_of(DataType::date32, std::int32_t{9204}), hash_of(DataType::int64, std::int64_t{9204}));
    // Years of other lengths than four are dates too.
    EXPECT_EQ(hash_of(DataType::string, std::string_view("12021-06-01")),
              hash_of(DataType::int64, std::int64_t{to_date32({12021, 6, 1})}));
    EXPECT_EQ(hash_of(DataType::string, std::string_view("-0001-12-31")),
              hash_of(DataType::int64, std::int64_t{to_date32({-1, 12, 31})}));
    // A year's leading zeros are allowed, unlike an integer's.
    EXPECT_EQ(hash_of(DataType::string, std::string_view("01995-03-15")),
              hash_of(DataType::date32, std::int32_t{9204}));
}

TEST(RowHash, HashesATimestampAsItsMicrosecondsWhateverItsUnitZoneOrText) {
    // 1995-03-15 13:04:05.25 UTC.
    std::int64_t const seconds = 9204 * 86'400 + 13 * 3600 + 4 * 60 + 5;
    auto const microseconds = hash_of(DataType::int64, seconds * 1'000'000 + 250'000);
    EXPECT_EQ(hash_of(DataType::timestamp_ms, seconds * 1'000 + 250), microseconds);
    EXPECT_EQ(hash_of(DataType::timestamp_us, seconds * 1'000'000 + 250'000), microseconds);
    EXPECT_EQ(hash_of(DataType::timestamp_ns_utc, seconds * 1'000'000'000 + 250'000'000), microseconds);
    for (std::string_view const text : {"1995-03-15 13:04:05.25", "1995-03-15T13:04:05.250000Z",
                                        "1995-03-15 14:04:05.250+01:00", "1995-03-15 13:04:05.250000000"}) {
        EXPECT_EQ(hash_of(DataType::string, text), microseconds) << text;
    }
    // Nanoseconds within one microsecond share its hash, as text or not.
    EXPECT_EQ(hash_of(DataType::timestamp_ns, seconds * 1'000'000'000 + 250'000'999), microseconds);
    EXPECT_EQ(hash_of(DataType::string, std::string_view("1995-03-15 13:04:05.250000999")), microseconds);
    EXPECT_EQ(hash_of(DataType::string, std::string_view("1995-03-15 13:04:05.25 ")),
              hash_of_bytes("1995-03-15 13:04:05.25 "));
}

TEST(RowHash, HashesABooleanAndItsTextInAnyCaseAsTheInteger1Or0) {
    EXPECT_EQ(hash_of(DataType::boolean, true), hash_of(DataType::int64, std::int64_t{1}));
    EXPECT_EQ(hash_of(DataType::boolean, false), hash_of(DataType::int64, std::int64_t{0}));
    for (std::string_view const text : {"true", "True", "TRUE", "tRuE"}) {
        EXPECT_EQ(hash_of(DataType::string, text), hash_of(DataType::boolean, true)) << text;
    }
    for (std::string_view const text : {"false", "False", "FALSE"}) {
        EXPECT_EQ(hash_of(DataType::string, text), hash_of(DataType::boolean, false)) << text;
    }
    for (std::string_view const text : {"tru", "falsey", "t", "f", "yes", " true", "true ", "TRUE\n", "4rue"}) {
        EXPECT_EQ(hash_of(DataType::string, text), hash_of_bytes(text)) << text;
    }
    // The two keys of a boolean column go to two partitions, at the counts people use.
    for (std::uint32_t const partitions : {2U, 4U, 7U, 16U, 64U}) {
        EXPECT_NE(partition_index(hash_of(DataType::boolean, true), partitions),
                  partition_index(hash_of(DataType::boolean, false), partitions))
            << partitions;
    }
}

TEST(RowHash, HashesStringsThatDoNotSpellAnIntegerExactlyAsTheirBytes) {
    for (std::string_view const text : {"042", "-0", "+7", " 42", "42 ", "4.2e1", "42.0", "-", "",
                                        "9223372036854775808", "1995-02-30", "+1995-03-15", "1995-3-15", "user_1"}) {
        EXPECT_EQ(hash_of(DataType::string, text), hash_of_bytes(text)) << "'" << text << "'";
    }
}

TEST(RowHash, HashesZerosAsOneValueAndNaNsAsOneValue) {
    EXPECT_EQ(hash_of(DataType::float64, -0.0), hash_of(DataType::float64, 0.0));
    EXPECT_EQ(hash_of(DataType::float64, -0.0), hash_of(DataType::int64, std::int64_t{0}));
    auto const quiet = std::numeric_limits<double>::quiet_NaN();
    auto const payload = std::bit_cast<double>(std::uint64_t{0xfff0000000000123});
    ASSERT_TRUE(std::isnan(payload));
    EXPECT_EQ(hash_of(DataType::float64, quiet), hash_of(DataType::float64, -quiet));
    EXPECT_EQ(hash_of(DataType::float64, quiet), hash_of(DataType::float64, payload));
    std::uint64_t const nan_bits = 0x7ff8000000000000;
    EXPECT_EQ(hash_of(DataType::float64, quiet), XXH3_64bits_withSeed(&nan_bits, sizeof nan_bits, 0));
    auto const half = 1.5;
    EXPECT_EQ(hash_of(DataType::float64, half), XXH3_64bits_withSeed(&half, sizeof half, 0));
    EXPECT_NE(hash_of(DataType::float64, 9223372036854775808.0), hash_of(DataType::int64,
                                                                           std::numeric_limits<std::int64_t>::min()));
}

TEST(RowHash, HashesADoubleAsAnIntegerExactlyWhenItIsAnIntegerWithinInt64) {
    EXPECT_EQ(hash_of(DataType::float64, -3.0), hash_of(DataType::int64, std::int64_t{-3}));
    EXPECT_EQ(hash_of(DataType::float64, -9223372036854775808.0),
              hash_of(DataType::int64, std::numeric_limits<std::int64_t>::min()));
    EXPECT_EQ(hash_of(DataType::float64, 0x1p62), hash_of(DataType::int64, std::int64_t{1} << 62));
    EXPECT_EQ(hash_of(DataType::float64, std::nextafter(0x1p63, 0.0)),
              hash_of(DataType::int64, std::int64_t{9223372036854774784}));
    for (double const value : {0.5, -2.25, 9223372036854775808.0, -9223372036854777856.0, 1e300,
                               std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                               std::numeric_limits<double>::denorm_min()}) {
        EXPECT_EQ(hash_of(DataType::float64, value), XXH3_64bits_withSeed(&value, sizeof value, 0)) << value;
    }
}

TEST(PartitionIndex, SpreadsHashesEvenlyOverTheRange) {
    constexpr std::uint32_t partitions = 7;
    std::vector<std::size_t> counts(partitions, 0);
    constexpr std::uint64_t samples = 70'000;
    for (std::uint64_t value = 0; value < samples; ++value) {
        auto const partition = partition_index(XXH3_64bits(&value, sizeof(value)), partitions);
        ASSERT_LT(partition, partitions);
        ++counts[partition];
    }
    for (auto const count : counts) {
        EXPECT_NEAR(static_cast<double>(count), samples / partitions, samples / partitions * 0.05);
    }
    EXPECT_EQ(partition_index(~std::uint64_t{0}, partitions), partitions - 1);
    EXPECT_EQ(partition_index(0, partitions), 0u);
}

TEST(HashPartition, PutsEveryRowInThePartitionItsKeyHashesToAndLosesNone) {
    auto const table = random_table(2000, 12, 0.2);
    std::vector<std::size_t> const keys{1, 4};
    constexpr std::uint32_t partitions = 5;
    auto const parts = hash_partition(table, keys, partitions);
    ASSERT_EQ(parts.size(), partitions);
    TableChecksum combined;
    std::size_t rows = 0;
    for (std::uint32_t partition = 0; partition < partitions; ++partition) {
        for (auto const hash : hash_rows(parts[partition], keys)) {
            EXPECT_EQ(partition_index(hash, partitions), partition);
        }
        combined += TableChecksum::of(parts[partition]);
        rows += parts[partition].num_rows();
        EXPECT_GT(parts[partition].num_rows(), 0u);
    }
    EXPECT_EQ(rows, table.num_rows());
    EXPECT_EQ(combined, TableChecksum::of(table));
}

TEST(HashPartition, SendsEqualKeysFromDifferentTablesToTheSamePartition) {
    auto const table = random_table(500, 13, 0.3);
    std::vector<std::size_t> const keys{0};
    auto const ids = partition_rows(table, keys, 16);
    std::vector<std::uint32_t> const reversed_rows = [&] {
        std::vector<std::uint32_t> rows(table.num_rows());
        std::iota(rows.rbegin(), rows.rend(), 0U);
        return rows;
    }();
    auto const reversed_ids = partition_rows(table.take(reversed_rows), keys, 16);
    for (std::size_t row = 0; row < ids.size(); ++row) {
        EXPECT_EQ(ids[row], reversed_ids[ids.size() - 1 - row]);
    }
}

TEST(HashPartition, KeepsTheRowOrderWithinEachPartition) {
    auto const table = random_table(400, 14);
    std::vector<std::uint32_t> ids(table.num_rows());
    for (std::size_t row = 0; row < ids.size(); ++row) {
        ids[row] = row < 150 ? 1 : 0;
    }
    auto const parts = split_by_partition(table, ids, 3);
    EXPECT_EQ(parts[0], table.slice(150, 250));
    EXPECT_EQ(parts[1], table.slice(0, 150));
    EXPECT_EQ(parts[2].num_rows(), 0u);
    EXPECT_EQ(parts[2].schema(), table.schema());
}

TEST(HashPartition, RejectsBadArguments) {
    auto const table = random_table(10, 15);
    std::vector<std::size_t> const no_keys;
    std::vector<std::size_t> const bad_key{12};
    std::vector<std::size_t> const key{0};
    EXPECT_THROW_WITH(static_cast<void>(hash_partition(table, no_keys, 4)), InvalidArgument, "at least one key column");
    EXPECT_THROW_WITH(static_cast<void>(hash_partition(table, bad_key, 4)), InvalidArgument, "column 12");
    EXPECT_THROW_WITH(static_cast<void>(hash_partition(table, key, 0)), InvalidArgument, "0 partitions");
    std::vector<std::uint32_t> const short_ids(9, 0);
    EXPECT_THROW_WITH(static_cast<void>(split_by_partition(table, short_ids, 2)), InvalidArgument,
                      "9 partition ids for a table of 10 rows");
    std::vector<std::uint32_t> const big_ids(10, 2);
    EXPECT_THROW_WITH(static_cast<void>(split_by_partition(table, big_ids, 2)), InvalidArgument,
                      "partition id 2 is out of range for 2 partitions");
}

TEST(TableChecksum, IgnoresRowOrderAndChunking) {
    auto const table = random_table(700, 16, 0.2);
    std::vector<std::uint32_t> shuffled(table.num_rows());
    std::iota(shuffled.begin(), shuffled.end(), 0U);
    std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(16));
    auto const expected = TableChecksum::of(table);
    EXPECT_EQ(TableChecksum::of(table.take(shuffled)), expected);
    auto chunks = TableChecksum::of(table.slice(0, 123));
    chunks += TableChecksum::of(table.slice(123, 577));
    EXPECT_EQ(chunks, expected);
    EXPECT_EQ(expected.rows, 700u);
}

TEST(TableChecksum, ChangesWhenARowIsLostDuplicatedOrChanged) {
    auto const table = random_table(100, 17);
    auto const expected = TableChecksum::of(table);
    EXPECT_NE(TableChecksum::of(table.slice(0, 99)), expected);
    std::vector<std::uint32_t> duplicated(table.num_rows());
    std::iota(duplicated.begin(), duplicated.end(), 0U);
    duplicated.back() = 0;  // row 0 twice, the last row lost: same count
    auto const swapped = TableChecksum::of(table.take(duplicated));
    EXPECT_EQ(swapped.rows, expected.rows);
    EXPECT_NE(swapped, expected);
    EXPECT_NE(TableChecksum::of(random_table(100, 18)), expected);
    EXPECT_EQ(TableChecksum().to_string(), "rows=0 sum=0x0000000000000000 xor=0x0000000000000000");
}

TEST(TableChecksum, SeesATimestampChangeBelowAMicrosecondThatTheKeyHashDoesNot) {
    auto const one = [](std::int64_t nanoseconds) {
        TableBuilder builder(Schema({{"at", DataType::timestamp_ns}}));
        builder.column(0).append(nanoseconds);
        return builder.finish();
    };
    std::vector<std::size_t> const key{0};
    EXPECT_EQ(hash_rows(one(1'000'001), key), hash_rows(one(1'000'999), key)) << "one microsecond, one key";
    EXPECT_NE(TableChecksum::of(one(1'000'001)), TableChecksum::of(one(1'000'999)));
}
