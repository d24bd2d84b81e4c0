#include <spillway/table/row_hash.hpp>

#include <bit>
#include <charconv>
#include <cmath>
#include <numeric>
#include <optional>
#include <string_view>

#include <spillway/table/boolean_text.hpp>
#include <spillway/table/date32.hpp>
#include <spillway/table/timestamp.hpp>

#include "checksum_hashes.hpp"
#include "xxhash.hpp"

namespace spillway::table {
namespace {

/// Chains the canonical 8 bytes of an integer into `hash`.
std::uint64_t hash_integer(std::int64_t value, std::uint64_t hash) noexcept {
    return XXH3_64bits_withSeed(&value, sizeof value, hash);
}

std::uint64_t hash_null(std::uint64_t hash) noexcept { return XXH3_64bits_withSeed(nullptr, 0, ~hash); }

/// The bit pattern every NaN hashes as: the default quiet NaN.
constexpr std::uint64_t canonical_nan = 0x7ff8000000000000;

/// Chains a double: as the integer it equals, if it is integral and within
/// int64's range (so `-0.0` is `0`), as one NaN, or as its IEEE bit pattern.
/// Each is 8 bytes, chosen without a branch: a column that mixes integral
/// and fractional values (prices, discounts) would mispredict one.
std::uint64_t hash_double(double value, std::uint64_t hash) noexcept {
    constexpr double two_to_63 = 9223372036854775808.0;
    bool const in_range = value >= -two_to_63 && value < two_to_63;
    auto const integer = static_cast<std::int64_t>(in_range ? value : 0.0);
    bool const integral = in_range && static_cast<double>(integer) == value;
    auto const other = std::isnan(value) ? canonical_nan : std::bit_cast<std::uint64_t>(value);
    auto const integral_mask = std::uint64_t{0} - static_cast<std::uint64_t>(integral);  // a select, not a branch
    auto const bits = (static_cast<std::uint64_t>(integer) & integral_mask) | (other & ~integral_mask);
    return XXH3_64bits_withSeed(&bits, sizeof bits, hash);
}

}  // namespace

std::optional<std::int64_t> spelled_integer(std::string_view text) noexcept {
    auto const digits = text.substr(text.starts_with('-') ? 1 : 0);
    if (digits.empty() || digits.size() > 19 || digits[0] < '0' || digits[0] > '9'
        || (digits[0] == '0' && (digits.size() > 1 || digits.size() < text.size()))) {
        return std::nullopt;
    }
    std::int64_t value = 0;
    auto const [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

namespace {

/// Chains a string: as the integer it spells exactly, as the date it spells
/// as `YYYY-MM-DD` (days since the epoch), as the timestamp it spells (its
/// microseconds since the epoch), `true` and `false` in any case as 1 and 0,
/// or as its bytes.
std::uint64_t hash_string(std::string_view text, std::uint64_t hash) noexcept {
    // An integer and a date both begin with a digit or `-`; most strings
    // begin otherwise and go straight to the hash of their bytes.
    bool const may_be_a_number =
        !text.empty() && (text[0] == '-' || static_cast<unsigned char>(text[0] - '0') <= 9);
    if (may_be_a_number) {
        if (auto const integer = spelled_integer(text)) {
            return hash_integer(*integer, hash);
        }
        // Test the dashes of `-MM-DD` here, so that most strings that are no
        // date hash without a call.
        if (text.size() >= 10 && text[text.size() - 3] == '-' && text[text.size() - 6] == '-') {
            if (auto const days = parse_date32(text)) {
                return hash_integer(*days, hash);
            }
        }
        if (text.size() >= 19) {
            if (auto const timestamp = parse_timestamp(text)) {
                return hash_integer(timestamp_microseconds(*timestamp), hash);
            }
        }
    }
    if (text.size() - 4 <= 1) {  // a size of 4 or 5
        if (auto const value = parse_boolean(text)) {
            return hash_integer(*value ? 1 : 0, hash);
        }
    }
    return XXH3_64bits_withSeed(text.data(), text.size(), hash);
}

/// Chains a boolean as the integer 1 or 0. (Its text, `true` or `false`,
/// would do as well for co-partitioning, but those two hashes lie in one
/// partition for every count up to 18, and for 32 and 64.)
std::uint64_t hash_boolean(std::uint8_t value, std::uint64_t hash) noexcept { return hash_integer(value, hash); }

/// Chains the values of a fixed-width `column`, each with `hash_value`.
template <typename Value, typename Hash>
void hash_fixed(Column const& column, std::span<std::uint64_t> hashes, Hash hash_value) {
    auto const* values = reinterpret_cast<Value const*>(column.data_buffer().data());
    for (std::size_t row = 0; row < hashes.size(); ++row) {
        hashes[row] = column.is_null(row) ? hash_null(hashes[row]) : hash_value(values[row], hashes[row]);
    }
}

void hash_strings(Column const& column, std::span<std::uint64_t> hashes) {
    auto const offsets = column.offsets();
    auto const* characters = column.characters().data();
    for (std::size_t row = 0; row < hashes.size(); ++row) {
        hashes[row] = column.is_null(row)
                        ? hash_null(hashes[row])
                        : hash_string({characters + offsets[row],
                                       static_cast<std::size_t>(offsets[row + 1] - offsets[row])},
                                      hashes[row]);
    }
}

/// How `hash_rows_into` hashes a timestamp: by its whole microseconds, the
/// form every unit shares, or by its own ticks.
enum class Timestamps { as_microseconds, as_ticks };

/// The hashes `hash_rows` describes, in a `Hashes` vector, with timestamps
/// hashed as `timestamps` says.
template <typename Hashes>
Hashes hash_rows_into(Table const& table, std::span<std::size_t const> columns, std::uint64_t seed,
                      Timestamps timestamps = Timestamps::as_microseconds) {
    Hashes hashes(table.num_rows(), seed);
    for (auto const index : columns) {
        auto const& column = table.column(index);
        switch (column.type()) {
            case DataType::int32:
            case DataType::date32: hash_fixed<std::int32_t>(column, hashes, hash_integer); break;
            case DataType::int64: hash_fixed<std::int64_t>(column, hashes, hash_integer); break;
            case DataType::float64: hash_fixed<double>(column, hashes, hash_double); break;
            case DataType::string: hash_strings(column, hashes); break;
            case DataType::boolean: hash_fixed<std::uint8_t>(column, hashes, hash_boolean); break;
            case DataType::timestamp_ms:
            case DataType::timestamp_us:
            case DataType::timestamp_ns:
            case DataType::timestamp_ms_utc:
            case DataType::timestamp_us_utc:
            case DataType::timestamp_ns_utc:
                if (timestamps == Timestamps::as_ticks) {
                    hash_fixed<std::int64_t>(column, hashes, hash_integer);
                    break;
                }
                hash_fixed<std::int64_t>(column, hashes,
                                         [type = column.type()](std::int64_t ticks, std::uint64_t chained) {
                                             return hash_integer(timestamp_microseconds(ticks, type), chained);
                                         });
                break;
        }
    }
    return hashes;
}

}  // namespace

std::vector<std::uint64_t> hash_rows(Table const& table, std::span<std::size_t const> columns, std::uint64_t seed) {
    return hash_rows_into<std::vector<std::uint64_t>>(table, columns, seed);
}

std::vector<std::uint64_t> detail::checksum_hashes(Table const& table) {
    std::vector<std::size_t> columns(table.num_columns());
    std::iota(columns.begin(), columns.end(), std::size_t{0});
    return hash_rows_into<std::vector<std::uint64_t>>(table, columns, checksum_hash_seed, Timestamps::as_ticks);
}

ChargedRowHashes hash_rows_charged(Table const& table, std::span<std::size_t const> columns, std::uint64_t seed) {
    return hash_rows_into<ChargedRowHashes>(table, columns, seed);
}

}  // namespace spillway::table
