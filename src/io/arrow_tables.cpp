#include "arrow_tables.hpp"

#include <arrow/array.h>
#include <arrow/c/bridge.h>
#include <arrow/compute/cast.h>
#include <arrow/compute/initialize.h>
#include <arrow/util/basic_decimal.h>
#include <arrow/util/bitmap_ops.h>
#include <arrow/util/io_util.h>
#include <arrow/util/utf8.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/table/arrow_interop.hpp>

namespace spillway::io::detail {
namespace {

/// The most significant digits a decimal value may have for spillway to
/// read it: every integer of 15 digits is a double exactly, and a decimal of
/// 15 digits is the one decimal of that many digits nearest its double.
constexpr std::int64_t largest_exact_digits = 999'999'999'999'999;
/// The powers of ten that are doubles exactly, 10^0 to 10^22.
constexpr std::int32_t max_exact_power_of_ten = 22;

/// The Arrow type spillway reads a column of `type` as, or null if none.
std::shared_ptr<arrow::DataType> readable_type(arrow::DataType const& type) {
    switch (type.id()) {
        case arrow::Type::INT8:
        case arrow::Type::INT16:
        case arrow::Type::UINT8:
        case arrow::Type::UINT16:
        case arrow::Type::INT32: return arrow::int32();
        case arrow::Type::UINT32:
        case arrow::Type::UINT64:  // its values beyond int64's fail to convert, naming the column
        case arrow::Type::INT64: return arrow::int64();
        case arrow::Type::DECIMAL32:
        case arrow::Type::DECIMAL64:
        case arrow::Type::DECIMAL128:
        case arrow::Type::DECIMAL256:  // each value checked as it is read: decode_decimals
        case arrow::Type::HALF_FLOAT:
        case arrow::Type::FLOAT:
        case arrow::Type::DOUBLE: return arrow::float64();
        case arrow::Type::DATE32:
        case arrow::Type::DATE64: return arrow::date32();
        case arrow::Type::BOOL: return arrow::boolean();
        case arrow::Type::TIMESTAMP: {
            auto const& timestamp = static_cast<arrow::TimestampType const&>(type);
            auto const unit = timestamp.unit() == arrow::TimeUnit::SECOND ? arrow::TimeUnit::MILLI : timestamp.unit();
            return arrow::timestamp(unit, timestamp.timezone().empty() ? "" : "UTC");
        }
        case arrow::Type::NA:  // a column of nulls only, of no type: nulls of spillway's most general one
        case arrow::Type::STRING:
        case arrow::Type::LARGE_STRING:
        case arrow::Type::STRING_VIEW: return arrow::utf8();
        case arrow::Type::DICTIONARY: {
            auto const values = readable_type(*static_cast<arrow::DictionaryType const&>(type).value_type());
            return values != nullptr && values->id() == arrow::Type::STRING ? values : nullptr;
        }
        default: return nullptr;
    }
}

/// The spillway type of `type`, which `readable_type` returned.
table::DataType spillway_type(arrow::DataType const& type) {
    switch (type.id()) {
        case arrow::Type::INT32: return table::DataType::int32;
        case arrow::Type::INT64: return table::DataType::int64;
        case arrow::Type::DOUBLE: return table::DataType::float64;
        case arrow::Type::DATE32: return table::DataType::date32;
        case arrow::Type::BOOL: return table::DataType::boolean;
        case arrow::Type::TIMESTAMP: {
            auto const& timestamp = static_cast<arrow::TimestampType const&>(type);
            bool const utc = !timestamp.timezone().empty();
            using enum table::DataType;
            switch (timestamp.unit()) {
                case arrow::TimeUnit::MILLI: return utc ? timestamp_ms_utc : timestamp_ms;
                case arrow::TimeUnit::MICRO: return utc ? timestamp_us_utc : timestamp_us;
                default: return utc ? timestamp_ns_utc : timestamp_ns;
            }
        }
        default: return table::DataType::string;
    }
}

/// The validity bitmap of `column` as a spillway column holds it, from its
/// first row: empty where it has no nulls.
table::ColumnBuffer validity_of(arrow::Array const& column) {
    table::ColumnBuffer validity;
    if (column.null_count() > 0) {
        auto const rows = static_cast<std::size_t>(column.length());
        validity.assign((rows + 7) / 8, std::byte{0});
        arrow::internal::CopyBitmap(column.null_bitmap_data(), column.offset(), column.length(),
                                    reinterpret_cast<std::uint8_t*>(validity.data()), 0);
    }
    return validity;
}

/// Whether `column` is a dictionary of strings with 32-bit indices and no
/// null entry, as the Parquet reader makes them: `decode_strings` reads
/// those (Arrow's cast reads the others, a null entry as a null row).
bool is_string_dictionary(arrow::Array const& column) {
    if (column.type_id() != arrow::Type::DICTIONARY) {
        return false;
    }
    auto const& type = static_cast<arrow::DictionaryType const&>(*column.type());
    return type.index_type()->id() == arrow::Type::INT32 && type.value_type()->id() == arrow::Type::STRING
        && static_cast<arrow::DictionaryArray const&>(column).dictionary()->null_count() == 0;
}

/// The strings of `column`, a dictionary (`is_string_dictionary`), each
/// row's value copied out of the dictionary: one copy, where Arrow's cast to
/// plain strings and the import after it made two.
/// @throws CorruptData naming `what` if an index is outside the dictionary.
table::Column decode_strings(arrow::DictionaryArray const& column, std::string const& what) {
    auto const& dictionary = static_cast<arrow::StringArray const&>(*column.dictionary());
    auto const* indices = static_cast<arrow::Int32Array const&>(*column.indices()).raw_values();
    auto const rows = static_cast<std::size_t>(column.length());
    auto const entries = static_cast<std::uint32_t>(dictionary.length());
    auto validity = validity_of(column);
    auto const fail_index = [&](std::size_t row) {
        SPILLWAY_FAIL(what << ": dictionary index " << indices[row] << " of a dictionary of " << entries, CorruptData);
    };
    // A null row reads as entry `entries`, the empty string, whatever index it holds.
    std::vector<std::int32_t> starts(entries + 1);
    std::vector<std::int32_t> lengths(entries + 1, 0);
    for (std::uint32_t entry = 0; entry < entries; ++entry) {
        starts[entry] = dictionary.value_offset(entry);
        lengths[entry] = dictionary.value_length(entry);
    }
    // Each row's entry is `entry_of(row)`; the two passes are compiled for
    // columns with and without nulls.
    auto const decode = [&](auto entry_of) {
        table::ColumnBuffer offsets((rows + 1) * sizeof(std::int32_t));
        auto* offset = reinterpret_cast<std::int32_t*>(offsets.data());
        std::size_t characters = 0;  // cannot overflow: rows and lengths are below 2^31
        offset[0] = 0;
        for (std::size_t row = 0; row < rows; ++row) {
            characters += static_cast<std::size_t>(lengths[entry_of(row)]);
            offset[row + 1] = static_cast<std::int32_t>(characters);
        }
        SPILLWAY_EXPECTS(characters <= table::Column::max_characters,
                         what << ": more than " << table::Column::max_characters
                              << " bytes of strings in one batch, the most a column holds",
                         InvalidArgument);
        table::ColumnBuffer text(characters);
        auto const* values = dictionary.raw_data();
        for (std::size_t row = 0; row < rows; ++row) {
            auto const* from = values + starts[entry_of(row)];
            auto* to = reinterpret_cast<std::uint8_t*>(text.data()) + offset[row];
            auto const length = static_cast<std::size_t>(offset[row + 1] - offset[row]);
            if (length <= 8) {  // flags and codes: a call to memcpy would cost more than the copy
                for (std::size_t byte = 0; byte < length; ++byte) {
                    to[byte] = from[byte];
                }
            } else {
                std::memcpy(to, from, length);
            }
        }
        return table::Column::from_buffers(table::DataType::string, rows, std::move(validity), std::move(offsets),
                                           std::move(text));
    };
    if (validity.empty()) {
        // Every index checked in one pass, before any is used.
        std::uint32_t largest = 0;
        for (std::size_t row = 0; row < rows; ++row) {
            largest = std::max(largest, static_cast<std::uint32_t>(indices[row]));
        }
        if (rows > 0 && largest >= entries) {
            fail_index(static_cast<std::size_t>(std::find_if(indices, indices + rows, [&](std::int32_t index) {
                                                    return static_cast<std::uint32_t>(index) >= entries;
                                                }) - indices));
        }
        return decode([indices](std::size_t row) { return static_cast<std::uint32_t>(indices[row]); });
    }
    return decode([&](std::size_t row) {
        if ((std::to_integer<unsigned>(validity[row / 8]) >> (row % 8) & 1U) == 0) {
            return entries;
        }
        auto const entry = static_cast<std::uint32_t>(indices[row]);
        if (entry >= entries) [[unlikely]] {
            fail_index(row);
        }
        return entry;
    });
}

/// A decimal's unscaled integer: an int64 where it fits one, else as Arrow's
/// 256-bit decimal.
using UnscaledInteger = std::variant<std::int64_t, arrow::BasicDecimal256>;

/// The unscaled integer of `width` bytes (4, 8, 16 or 32: little-endian
/// two's complement) at `bytes`.
UnscaledInteger unscaled_integer(std::uint8_t const* bytes, std::size_t width) {
    if (width == 4) {
        std::int32_t narrow = 0;
        std::memcpy(&narrow, bytes, sizeof narrow);
        return std::int64_t{narrow};
    }
    auto const sign = static_cast<std::uint8_t>((bytes[7] & 0x80) != 0 ? 0xff : 0x00);
    if (std::all_of(bytes + 8, bytes + width, [sign](std::uint8_t byte) { return byte == sign; })) {
        std::int64_t whole = 0;
        std::memcpy(&whole, bytes, sizeof whole);
        return whole;
    }
    return width == 16 ? arrow::BasicDecimal256(arrow::BasicDecimal128(bytes)) : arrow::BasicDecimal256(bytes);
}

/// Whether `value` has at most `precision` digits.
bool within_precision(UnscaledInteger const& value, std::int32_t precision) {
    if (auto const* whole = std::get_if<std::int64_t>(&value)) {
        if (precision >= 19) {
            return true;
        }
        auto const bound = static_cast<std::int64_t>(arrow::BasicDecimal128::GetScaleMultiplier(precision).low_bits());
        return *whole < bound && *whole > -bound;
    }
    using Wide = arrow::BasicDecimal256;
    auto const magnitude = Wide::Abs(std::get<Wide>(value));
    return !magnitude.IsNegative()  // -2^255 has none
        && magnitude < Wide::GetScaleMultiplier(std::min(precision, Wide::kMaxPrecision));
}

/// The double nearest `digits` × 10^`exponent`, where the value has at most
/// 15 significant digits and lies within float64's range; `std::nullopt`
/// otherwise. Within ±22, the power of ten is a double exactly, as are the
/// digits, so one division or multiplication rounds once; beyond, the
/// value's text is read.
std::optional<double> nearest_double(std::int64_t digits, std::int64_t exponent) {
    static constexpr std::array<double, max_exact_power_of_ten + 1> powers = [] {
        std::array<double, max_exact_power_of_ten + 1> all{};
        double power = 1.0;
        for (auto& entry : all) {
            entry = power;
            power *= 10.0;  // exact up to 10^22
        }
        return all;
    }();
    auto const too_many_digits = [&digits] { return digits > largest_exact_digits || digits < -largest_exact_digits; };
    while (too_many_digits() && digits % 10 == 0) {
        digits /= 10;
        ++exponent;
    }
    if (too_many_digits()) {
        return std::nullopt;
    }
    if (exponent < -max_exact_power_of_ten || exponent > max_exact_power_of_ten) {
        auto const text = std::to_string(digits) + "e" + std::to_string(exponent);
        double value = 0.0;
        // Rounded to nearest; out of range, beyond the largest double or
        // nearer zero than the smallest.
        auto const [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        return error == std::errc() ? std::optional(value) : std::nullopt;
    }
    auto const whole = static_cast<double>(digits);
    auto const power = powers[static_cast<std::size_t>(exponent < 0 ? -exponent : exponent)];
    return exponent >= 0 ? whole * power : whole / power;
}

/// The same for `value` × 10^`exponent`; a value beyond int64 is first
/// divided by the power of ten that leaves 18 digits, if that leaves no
/// remainder.
std::optional<double> nearest_double(UnscaledInteger const& value, std::int64_t exponent) {
    if (auto const* whole = std::get_if<std::int64_t>(&value)) {
        return nearest_double(*whole, exponent);
    }
    using Wide = arrow::BasicDecimal256;
    auto const& wide = std::get<Wide>(value);
    auto const magnitude = Wide::Abs(wide);
    std::int32_t digits = 19;  // it does not fit an int64
    while (digits < Wide::kMaxPrecision && magnitude >= Wide::GetScaleMultiplier(digits)) {
        ++digits;
    }
    auto const dropped = digits - 18;
    Wide quotient;
    Wide remainder;
    if (magnitude.Divide(Wide::GetScaleMultiplier(dropped), &quotient, &remainder) != arrow::DecimalStatus::kSuccess
        || remainder != Wide()) {
        return std::nullopt;
    }
    auto const reduced = static_cast<std::int64_t>(quotient.low_bits());  // under 10^18
    return nearest_double(wide.IsNegative() ? -reduced : reduced, exponent + dropped);
}

/// The float64 column of `column`, a decimal of any width: each value the
/// double nearest it, in one rounding (`nearest_double`). Arrow's own cast
/// to double rounds twice and misses it for 13 to 53% of random
/// decimal(15, s) values, by scale.
/// @throws CorruptData naming `what` if a value has more digits than its
///         type's precision (neither Arrow's builders nor its readers check).
/// @throws InvalidArgument naming `what`, the row and the value if a value
///         has more than 15 significant digits or lies beyond float64's range.
table::Column decode_decimals(arrow::Array const& column, std::string const& what) {
    auto const& decimals = static_cast<arrow::FixedSizeBinaryArray const&>(column);
    auto const& type = static_cast<arrow::DecimalType const&>(*column.type());
    auto const rows = static_cast<std::size_t>(column.length());
    auto const width = static_cast<std::size_t>(type.byte_width());
    auto const where = [&column](std::size_t row) {
        auto const value = column.GetScalar(static_cast<std::int64_t>(row));
        return " (row " + std::to_string(row) + " of a batch: " + (value.ok() ? (*value)->ToString() : "?") + ")";
    };
    table::ColumnBuffer data(rows * sizeof(double));
    auto* values = reinterpret_cast<double*>(data.data());
    for (std::size_t row = 0; row < rows; ++row) {
        values[row] = 0.0;
        if (column.IsNull(static_cast<std::int64_t>(row))) {
            continue;  // its bytes may be anything
        }
        auto const value = unscaled_integer(decimals.GetValue(static_cast<std::int64_t>(row)), width);
        SPILLWAY_EXPECTS(within_precision(value, type.precision()),
                         what << " holds a value of more digits than its type " << type.ToString() << " allows"
                              << where(row),
                         CorruptData);
        auto const nearest = nearest_double(value, -static_cast<std::int64_t>(type.scale()));
        SPILLWAY_EXPECTS(nearest.has_value(),
                         what << " holds a value of more than 15 significant digits, or beyond float64's range, "
                                 "which spillway cannot read exactly as a float64"
                              << where(row)
                              << "; cast the column to float64 or to a string first",
                         InvalidArgument);
        values[row] = *nearest;
    }
    return table::Column::from_buffers(table::DataType::float64, rows, validity_of(column), std::move(data), {});
}

/// What a user can do about a value of a column of type `id` that the type
/// spillway reads it as cannot hold.
std::string_view way_around(arrow::Type::type id) noexcept {
    switch (id) {
        case arrow::Type::UINT64: return "cast the column to float64 or to a string first";
        case arrow::Type::DATE64: return "cast the column to a timestamp first";
        case arrow::Type::LARGE_STRING:
        case arrow::Type::STRING_VIEW: return "write the file in smaller record batches or row groups";
        default: return "cast the column to a string first";
    }
}

/// Registers Arrow's cast kernels once.
void initialize_compute() {
    static std::once_flag once;
    std::call_once(once, [] { check(arrow::compute::Initialize(), "cannot initialize Arrow's compute functions"); });
}

/// `dictionary` with its values as plain strings where they are large or
/// view strings (as Polars' categoricals are), whose taking by index Arrow's
/// cast lacks kernels for; otherwise as it is.
/// @throws CorruptData or IoError naming `what` if the values do not convert.
std::shared_ptr<arrow::Array> with_plain_string_values(std::shared_ptr<arrow::Array> dictionary,
                                                       std::string const& what) {
    auto const& array = static_cast<arrow::DictionaryArray const&>(*dictionary);
    auto const& values = array.dictionary();
    auto const readable = readable_type(*values->type());
    if (readable == nullptr || readable->id() != arrow::Type::STRING || values->type()->Equals(*readable)) {
        return dictionary;
    }
    initialize_compute();
    auto const plain = value_of(arrow::compute::Cast(*values, readable, arrow::compute::CastOptions::Safe()),
                                what + ": cannot convert its dictionary to string");
    return value_of(arrow::DictionaryArray::FromArrays(array.indices(), plain), what);
}

/// The table of `batch`, whose columns have spillway's types, imported
/// through the C Data Interface.
table::Table import_batch(arrow::RecordBatch const& batch, std::string const& file) {
    ArrowSchema schema;
    ArrowArray array;
    check(arrow::ExportRecordBatch(batch, &array, &schema), "'" + file + "': cannot hand rows over to spillway");
    try {
        return table::import_table(&schema, &array);
    } catch (InvalidArgument const& error) {  // the types were checked: what is left is malformed data
        SPILLWAY_FAIL("'" << file << "': " << error.what(), CorruptData);
    }
}

}  // namespace

void check(arrow::Status const& status, std::string const& what) {
    if (status.ok()) {
        return;
    }
    if (status.IsInvalid() || status.IsSerializationError()) {
        SPILLWAY_FAIL(what << ": " << status.message(), CorruptData);
    }
    SPILLWAY_FAIL(what << ": " << status.ToString(), IoError);
}

void check_decoded(arrow::Status const& status, std::string const& what) {
    SPILLWAY_EXPECTS(!status.IsIOError() || arrow::internal::ErrnoFromStatus(status) != 0,
                     what << ": " << status.message(), CorruptData);
    check(status, what);
}

table::Schema to_spillway(arrow::Schema const& schema, std::string const& file) {
    std::vector<table::Field> fields;
    for (auto const& field : schema.fields()) {
        auto const type = readable_type(*field->type());
        SPILLWAY_EXPECTS(type != nullptr,
                         "'" << file << "': column '" << field->name() << "' has the type " << field->type()->ToString()
                             << ", which spillway does not read; its types are int32, int64, float64, date32, "
                                "string, boolean and timestamps in ms, us or ns (narrower integers, uint32, uint64, "
                                "float16, float32, decimals whose values have up to 15 significant digits, "
                                "date64, large and view strings, dictionaries of strings, timestamps in seconds "
                                "and columns of nulls only are converted); cast the column to one of them, or "
                                "leave it out",
                         InvalidArgument);
        fields.push_back({field->name(), spillway_type(*type)});
    }
    return table::Schema(std::move(fields));
}

std::shared_ptr<arrow::Schema> to_arrow(table::Schema const& schema) {
    ArrowSchema exported;
    table::export_schema(schema, &exported);
    return value_of(arrow::ImportSchema(&exported), "cannot describe a table to Arrow");
}

table::Table to_table(arrow::RecordBatch const& batch, std::string const& file) {
    // Buffers too small for their lengths, or string offsets past their
    // data, would be read out of bounds: a check per column, not per value.
    check(batch.Validate(), "'" + file + "' holds a malformed record batch");
    // Dictionaries of strings are decoded here; the other columns are
    // imported together through the C Data Interface.
    std::vector<std::optional<table::Column>> decoded(static_cast<std::size_t>(batch.num_columns()));
    std::vector<std::shared_ptr<arrow::Array>> columns;
    std::vector<std::shared_ptr<arrow::Field>> fields;
    for (int index = 0; index < batch.num_columns(); ++index) {
        auto column = batch.column(index);
        auto const& field = batch.schema()->field(index);
        if (column->type_id() == arrow::Type::DICTIONARY) {
            column = with_plain_string_values(std::move(column), "'" + file + "': column '" + field->name() + "'");
        }
        if (is_string_dictionary(*column)) {
            decoded[static_cast<std::size_t>(index)] = decode_strings(
                static_cast<arrow::DictionaryArray const&>(*column), "'" + file + "': column '" + field->name() + "'"
            );
            continue;
        }
        if (arrow::is_decimal(column->type_id())) {
            decoded[static_cast<std::size_t>(index)] =
                decode_decimals(*column, "'" + file + "': column '" + field->name() + "'");
            continue;
        }
        auto const type = readable_type(*column->type());
        SPILLWAY_EXPECTS(type != nullptr,
                         "'" << file << "': column '" << field->name() << "' has the type "
                             << column->type()->ToString() << ", which spillway does not read",
                         InvalidArgument);
        if (!column->type()->Equals(*type)) {
            initialize_compute();
            auto cast = arrow::compute::Cast(*column, type, arrow::compute::CastOptions::Safe());
            // A safe cast refuses a value it would change as Invalid.
            SPILLWAY_EXPECTS(!cast.status().IsInvalid(),
                             "'" << file << "': column '" << field->name() << "' holds a value that spillway's "
                                 << table::to_string(spillway_type(*type))
                                 << " cannot hold: " << cast.status().message() << "; "
                                 << way_around(column->type_id()),
                             InvalidArgument);
            column = value_of(std::move(cast), "'" + file + "': cannot convert column '" + field->name() + "' to "
                                                   + std::string(table::to_string(spillway_type(*type))));
        }
        fields.push_back(arrow::field(field->name(), type));
        columns.push_back(std::move(column));
    }
    auto const readable = arrow::RecordBatch::Make(arrow::schema(std::move(fields)), batch.num_rows(), columns);
    if (columns.size() == decoded.size()) {
        return import_batch(*readable, file);
    }
    auto imported = columns.empty() ? std::vector<table::Column>() : import_batch(*readable, file).release_columns();
    std::vector<table::Field> schema;
    std::vector<table::Column> all;
    auto next_imported = imported.begin();
    for (std::size_t index = 0; index < decoded.size(); ++index) {
        auto column = decoded[index] ? std::move(*decoded[index]) : std::move(*next_imported++);
        schema.push_back({batch.schema()->field(static_cast<int>(index))->name(), column.type()});
        all.push_back(std::move(column));
    }
    return {table::Schema(std::move(schema)), std::move(all)};
}

namespace {

/// Whether `text` is UTF-8.
bool is_utf8(std::string_view text) {
    static bool const initialized = (arrow::util::InitializeUTF8(), true);
    static_cast<void>(initialized);
    return arrow::util::ValidateUTF8(reinterpret_cast<std::uint8_t const*>(text.data()),
                                     static_cast<std::int64_t>(text.size()));
}

}  // namespace

void check_utf8_names(table::Schema const& schema, std::filesystem::path const& file) {
    for (auto const& field : schema.fields()) {
        SPILLWAY_EXPECTS(is_utf8(field.name),
                         "the column name '" << field.name << "' is not UTF-8, which Parquet's and Arrow's must be ('"
                                             << file.string() << "'); write CSV to keep it as it is",
                         InvalidArgument);
    }
}

void check_utf8(table::Table const& table, std::filesystem::path const& file) {
    for (std::size_t index = 0; index < table.num_columns(); ++index) {
        auto const& column = table.column(index);
        if (column.type() != table::DataType::string) {
            continue;
        }
        // The characters as a whole, and each string starting where a
        // character starts (not on a continuation byte, 10xxxxxx), at once;
        // string by string only to name the first that is not UTF-8 (or to
        // pass over bytes under nulls, which are not written).
        auto const characters = column.characters();
        auto const offsets = column.offsets();
        bool const whole = is_utf8(characters) && std::ranges::none_of(offsets, [&](std::int32_t offset) {
            auto const at = static_cast<std::size_t>(offset);
            return at < characters.size() && (static_cast<unsigned char>(characters[at]) & 0xc0U) == 0x80U;
        });
        if (whole) {
            continue;
        }
        for (std::size_t row = 0; row < column.size(); ++row) {
            if (column.is_null(row)) {
                continue;
            }
            auto const value = characters.substr(static_cast<std::size_t>(offsets[row]),
                                                 static_cast<std::size_t>(offsets[row + 1] - offsets[row]));
            SPILLWAY_EXPECTS(is_utf8(value),
                             "column '" << table.schema().field(index).name << "' holds a string that is not UTF-8 "
                                        << "(row " << row << " of the rows being written to '" << file.string()
                                        << "'), which Parquet and Arrow strings must be; write CSV to keep such "
                                           "bytes as they are",
                             InvalidArgument);
        }
    }
}

std::shared_ptr<arrow::RecordBatch> to_record_batch(table::Table table, std::shared_ptr<arrow::Schema> const& schema) {
    ArrowArray array;
    table::export_array(std::move(table), &array);
    return value_of(arrow::ImportRecordBatch(&array, schema), "cannot hand rows over to Arrow");
}

}  // namespace spillway::io::detail
