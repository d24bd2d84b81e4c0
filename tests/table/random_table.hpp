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

/// A column of every type, in this order: int32, int64, float64, date32, string.
inline Schema every_type_schema() {
    return Schema({{"i32", DataType::int32},
                   {"i64", DataType::int64},
                   {"f64", DataType::float64},
                   {"day", DataType::date32},
                   {"text", DataType::string}});
}

/// `rows` rows of `every_type_schema()` drawn from `seed`: each value is null
/// with probability `null_fraction`; strings are 0 to `max_string` bytes of
/// any byte value, including delimiters, quotes and newlines.
inline Table random_table(std::size_t rows, std::uint64_t seed, double null_fraction = 0.1,
                          std::size_t max_string = 40) {
    std::mt19937_64 random(seed);
    std::bernoulli_distribution is_null(null_fraction);
    std::uniform_int_distribution<std::size_t> length(0, max_string);
    std::uniform_int_distribution<int> byte(0, 255);
    TableBuilder builder(every_type_schema(), rows);
    for (std::size_t row = 0; row < rows; ++row) {
        for (std::size_t column = 0; column < 5; ++column) {
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
                default: {
                    std::string text(length(random), '\0');
                    for (auto& c : text) {
                        c = static_cast<char>(byte(random));
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
