#pragma once
/// @file
/// Tables with few distinct keys (so joins and groups find matches), and a
/// row-by-row view of a table for comparing operators with simple models.
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <spillway/table/table.hpp>
#include <spillway/table/table_builder.hpp>

#include <gtest/gtest.h>

namespace spillway::query::test {

/// One value of a row: null, an integer (int32, int64 and date32 alike), a
/// double or a string.
using Value = std::optional<std::variant<std::int64_t, double, std::string>>;
using Row = std::vector<Value>;

/// Every row of `table`, each value as a `Value`.
inline std::vector<Row> rows_of(table::Table const& table) {
    std::vector<Row> rows(table.num_rows(), Row(table.num_columns()));
    for (std::size_t c = 0; c < table.num_columns(); ++c) {
        auto const& column = table.column(c);
        for (std::size_t r = 0; r < table.num_rows(); ++r) {
            if (column.is_null(r)) {
                continue;
            }
            table::visit_stored_type(column.type(), [&]<typename Stored>(Stored) {
                if constexpr (std::is_same_v<Stored, std::string_view>) {
                    rows[r][c] = std::string(column.string(r));
                } else if constexpr (std::is_integral_v<Stored>) {
                    rows[r][c] = std::int64_t{column.values<Stored>()[r]};
                } else {
                    rows[r][c] = column.values<Stored>()[r];
                }
            });
        }
    }
    return rows;
}

/// `rows` rows with columns `<prefix>key` (int64, 0 to 7), `<prefix>tag`
/// (string, one of four, "" among them), `<prefix>count` (int32),
/// `<prefix>amount` (float64, in cents) and `<prefix>day` (date32); every
/// value is null with probability `null_fraction`.
inline table::Table keyed_table(std::size_t rows, std::uint64_t seed, std::string const& prefix,
                                double null_fraction = 0.1) {
    using table::DataType;
    table::TableBuilder builder(table::Schema({{prefix + "key", DataType::int64},
                                               {prefix + "tag", DataType::string},
                                               {prefix + "count", DataType::int32},
                                               {prefix + "amount", DataType::float64},
                                               {prefix + "day", DataType::date32}}),
                                rows);
    std::mt19937_64 random(seed);
    std::bernoulli_distribution is_null(null_fraction);
    char const* const tags[] = {"red", "green", "", "blue"};
    for (std::size_t row = 0; row < rows; ++row) {
        for (std::size_t column = 0; column < 5; ++column) {
            auto& out = builder.column(column);
            if (is_null(random)) {
                out.append_null();
                continue;
            }
            switch (column) {
                case 0: out.append(static_cast<std::int64_t>(random() % 8)); break;
                case 1: out.append(std::string_view(tags[random() % 4])); break;
                case 2: out.append(static_cast<std::int32_t>(random() % 1000) - 500); break;
                case 3: out.append(static_cast<double>(random() % 100000) / 100.0); break;
                default: out.append(static_cast<std::int32_t>(9000 + random() % 30)); break;
            }
        }
    }
    return builder.finish();
}

/// Expects equal rows, doubles equal within a relative `tolerance`.
inline void expect_rows_near(std::vector<Row> const& actual, std::vector<Row> const& expected,
                             double tolerance = 0) {
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t r = 0; r < actual.size(); ++r) {
        ASSERT_EQ(actual[r].size(), expected[r].size()) << "row " << r;
        for (std::size_t c = 0; c < actual[r].size(); ++c) {
            auto const& a = actual[r][c];
            auto const& e = expected[r][c];
            ASSERT_EQ(a.has_value(), e.has_value()) << "row " << r << " column " << c;
            if (a && e && std::holds_alternative<double>(*a) && std::holds_alternative<double>(*e)) {
                double const x = std::get<double>(*a);
                double const y = std::get<double>(*e);
                EXPECT_NEAR(x, y, tolerance * std::max(1.0, std::abs(y))) << "row " << r << " column " << c;
            } else {
                EXPECT_EQ(a, e) << "row " << r << " column " << c;
            }
        }
    }
}

}  // namespace spillway::query::test
