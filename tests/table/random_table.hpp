#pragma once
/// @file
/// Tables of random values of every type, with nulls, for round-trip tests,
/// and random partition ids for splitting them.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <spillway/table/table_builder.hpp>

namespace spillway::table::test {

/// A column of every type, in this order: int32, int64, float64, date32,
/// string, boolean, then the timestamps from `timestamp_ms` to `timestamp_ns_utc`.
inline Schema every_type_schema() {
    return Schema({{"i32", DataType::int32},
                   {"i64", DataType::int64},
                   {"f64", DataType::float64},
                   {"day", DataType::date32},
                   {"text", DataType::string},
                   {"flag", DataType::boolean},
                   {"at_ms", DataType::timestamp_ms},
                   {"at_us", DataType::timestamp_us},
                   {"at_ns", DataType::timestamp_ns},
                   {"at_ms_utc", DataType::timestamp_ms_utc},
                   {"at_us_utc", DataType::timestamp_us_utc},
                   {"at_ns_utc", DataType::timestamp_ns_utc}});
}

/// What the strings of `random_table` are made of.
enum class RandomStrings {
    any_bytes,  ///< bytes of any value: what CSV and spillway's own formats hold
    utf8,       ///< UTF-8 of any code point: what Parquet and Arrow strings must be
};

/// Appends the UTF-8 of a code point drawn from `random` to `text`, unless
/// that would take it past `length` bytes: half of them ASCII, the others
/// of 2, 3 or 4 bytes. Returns whether it appended.
inline bool append_random_code_point(std::mt19937_64& random, std::size_t length, std::string& text) {
    static constexpr std::uint32_t lowest[] = {0, 0x80, 0x800, 0x10000};
    static constexpr std::uint32_t highest[] = {0x7f, 0x7ff, 0xffff, 0x10ffff};
    static constexpr std::uint32_t lead[] = {0, 0xc0, 0xe0, 0xf0};  // 110xxxxx, 1110xxxx, 11110xxx
    auto const bytes = random() % 2 == 0 ? 1U : 2U + static_cast<unsigned>(random() % 3);
    if (text.size() + bytes > length) {
        return false;
    }
    auto point = std::uniform_int_distribution<std::uint32_t>(lowest[bytes - 1], highest[bytes - 1])(random);
    if (point >= 0xd800 && point <= 0xdfff) {
        point = 0xfffd;  // surrogates are no characters
    }
    if (bytes == 1) {
        text += static_cast<char>(point);
        return true;
    }
    text += static_cast<char>(lead[bytes - 1] | (point >> (6 * (bytes - 1))));
    for (auto shift = static_cast<int>(6 * (bytes - 2)); shift >= 0; shift -= 6) {
        text += static_cast<char>(0x80U | ((point >> shift) & 0x3fU));
    }
    return true;
}

/// `rows` rows of `every_type_schema()` drawn from `seed`: each value is null
/// with probability `null_fraction`; strings are 0 to `max_string` bytes of
/// `strings`, including delimiters, quotes and newlines.
inline Table random_table(std::size_t rows, std::uint64_t seed, double null_fraction = 0.1,
                          std::size_t max_string = 40, RandomStrings strings = RandomStrings::any_bytes) {
    std::mt19937_64 random(seed);
    std::bernoulli_distribution is_null(null_fraction);
    std::uniform_int_distribution<std::size_t> length(0, max_string);
    std::uniform_int_distribution<int> byte(0, 255);
    auto const schema = every_type_schema();
    TableBuilder builder(schema, rows);
    for (std::size_t row = 0; row < rows; ++row) {
        for (std::size_t column = 0; column < schema.size(); ++column) {
            auto& out = builder.column(column);
            if (is_null(random)) {
                out.append_null();
                continue;
            }
            switch (column) {
                case 0: out.append(static_cast<std::int32_t>(random())); break;
                case 1: out.append(static_cast<std::int64_t>(random())); break;
                case 2: out.append(std::uniform_real_distribution<double>(-1e9, 1e9)(random)); break;
                case 3: out.append(static_cast<std::int32_t>(random() % 40000) - 10000); break;
                case 5: out.append(random() % 2 == 0); break;
                case 6:
                case 7:
                case 8:
                case 9:
                case 10:
                case 11: out.append(static_cast<std::int64_t>(random())); break;
                default: {
                    std::string text;
                    auto const bytes = length(random);
                    if (strings == RandomStrings::utf8) {
                        while (append_random_code_point(random, bytes, text)) {
                        }
                    } else {
                        text.resize(bytes);
                        for (auto& c : text) {
                            c = static_cast<char>(byte(random));
                        }
                    }
                    out.append(text);
                }
            }
        }
    }
    return builder.finish();
}

/// `count` partition ids below `partitions` drawn from `seed`, skewed so that
/// some partitions get many rows and some none.
inline std::vector<std::uint32_t> skewed_partitions(std::size_t count, std::uint32_t partitions, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::geometric_distribution<std::uint32_t> draw(0.3);
    std::vector<std::uint32_t> ids(count);
    for (auto& id : ids) {
        id = std::min(draw(random), partitions - 1);
    }
    return ids;
}

}  // namespace spillway::table::test
