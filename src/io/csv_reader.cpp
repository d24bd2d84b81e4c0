#include <spillway/io/csv_reader.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

// Inlined: one hash per row, and a call per row would cost more than short rows do.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <spillway/core/error.hpp>
#include <spillway/table/boolean_text.hpp>
#include <spillway/table/column_builder.hpp>
#include <spillway/table/date32.hpp>
#include <spillway/table/timestamp.hpp>
#include <spillway/table/row_hash.hpp>

#include "csv_file_start.hpp"
#include "csv_scanner.hpp"

namespace spillway::io {

using table::checksum_hash_seed;
using table::Column;
using table::ColumnBuilder;
using table::DataType;
using table::Field;
using table::parse_date32;
using table::parse_timestamp;
using table::timestamp_ticks;
using table::Schema;
using table::Table;
using table::TableChecksum;
namespace detail {

/// The number of `\n` in `text`. Counts 240 bytes at a time into a byte, so
/// the compiler can count 16 or 32 bytes per instruction without widening.
std::size_t count_line_breaks(std::string_view text) noexcept {
    constexpr std::size_t stride = 240;  // a multiple of the vector width that fits a byte's count
    std::size_t total = 0;
    std::size_t index = 0;
    for (; index + stride <= text.size(); index += stride) {
        std::uint8_t count = 0;
        for (std::size_t offset = 0; offset < stride; ++offset) {
            count = static_cast<std::uint8_t>(count + (text[index + offset] == '\n' ? 1 : 0));
        }
        total += count;
    }
    for (; index < text.size(); ++index) {
        total += text[index] == '\n' ? 1 : 0;
    }
    return total;
}

std::string CsvErrors::locate(std::size_t position, std::string_view message) const {
    auto const line = first_line_ + count_line_breaks(text_.substr(0, position));
    return std::string(path_) + ':' + std::to_string(line) + ": " + std::string(message);
}

void CsvErrors::fail(std::size_t position, std::string_view message) const {
    SPILLWAY_FAIL(locate(position, message), CorruptData);
}

void CsvErrors::fail_value(std::size_t position, std::string_view message, std::string const& column) const {
    throw CsvValueError(locate(position, message), column);
}

std::size_t end_of_last_row(std::string_view text, std::optional<char> quote) noexcept {
    auto const last_line_break = [](char const* from, char const* to) -> std::size_t {
        auto const* found = static_cast<char const*>(memrchr(from, '\n', static_cast<std::size_t>(to - from)));
        return found == nullptr ? 0 : static_cast<std::size_t>(found + 1 - from);
    };
    char const* const begin = text.data();
    char const* const end = begin + text.size();
    if (!quote.has_value()) {
        return last_line_break(begin, end);
    }
    // Line breaks count only outside quotes; a doubled quote leaves and
    // re-enters, which changes nothing.
    std::size_t cut = 0;
    for (char const* position = begin; position < end;) {
        auto const* opening = static_cast<char const*>(std::memchr(position, *quote, static_cast<std::size_t>(end - position)));
        char const* const outside_end = opening == nullptr ? end : opening;
        if (auto const found = last_line_break(position, outside_end); found != 0) {
            cut = static_cast<std::size_t>(position - begin) + found;
        }
        if (opening == nullptr) {
            break;
        }
        auto const* closing = static_cast<char const*>(std::memchr(opening + 1, *quote, static_cast<std::size_t>(end - opening - 1)));
        if (closing == nullptr) {
            break;
        }
        position = closing + 1;
    }
    return cut;
}

}  // namespace detail

namespace {

using detail::CsvErrors;
using detail::CsvScanner;

constexpr auto no_slot = std::numeric_limits<std::size_t>::max();

std::string quoted_excerpt(std::string_view value) {
    constexpr std::size_t longest = 40;
    std::string excerpt(1, '\'');
    excerpt.append(value.substr(0, longest));
    excerpt.append(value.size() > longest ? "...'" : "'");
    return excerpt;
}

template <typename T>
bool parse_number(std::string_view text, T& value) noexcept {
    auto const [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc{} && end == text.data() + text.size();
}

/// Parses a double. A plain decimal such as `-123.45` with at most 15 digits
/// takes a fast path that is still exact: its digits and the power of ten
/// are both exact doubles, so the one division rounds correctly (Clinger's
/// fast path). Anything else goes to `std::from_chars`.
bool parse_float64(std::string_view text, double& value) noexcept {
    constexpr std::array<double, 16> powers_of_ten{1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    constexpr int max_digits = 15;
    char const* position = text.data();
    char const* const end = position + text.size();
    bool const negative = position != end && *position == '-';
    position += negative ? 1 : 0;
    std::uint64_t digits_value = 0;
    int digits = 0;
    int fraction_digits = 0;
    bool seen_point = false;
    for (; position != end; ++position) {
        auto const digit = static_cast<unsigned>(*position - '0');
        if (digit < 10) {
            digits_value = digits_value * 10 + digit;
            ++digits;
            fraction_digits += seen_point ? 1 : 0;
        } else if (*position == '.' && !seen_point) {
            seen_point = true;
        } else {
            break;
        }
    }
    if (position != end || digits == 0 || digits > max_digits) {
        return parse_number(text, value);
    }
    value = static_cast<double>(digits_value) / powers_of_ten[static_cast<std::size_t>(fraction_digits)];
    value = negative ? -value : value;
    return true;
}

/// Whether `text` spells an integer other than exactly, with a leading zero
/// (`042`, `00`) or as `-0`: what type inference takes for no number.
bool spells_integer_inexactly(std::string_view text) noexcept {
    auto const digits = text.substr(text.starts_with('-') ? 1 : 0);
    return !digits.empty() && digits[0] == '0' && (digits.size() > 1 || digits.size() < text.size())
        && std::ranges::all_of(digits, [](char c) { return c >= '0' && c <= '9'; });
}

/// Appends the value of a field to `builder`: null if empty and unquoted.
/// Returns false if the text is not a value of the builder's type, or, where
/// the type was `inferred`, an integer spelled other than exactly.
bool append_field(ColumnBuilder& builder, std::string_view text, bool quoted, bool inferred) {
    if (text.empty() && !quoted) {
        builder.append_null();
        return true;
    }
    switch (builder.type()) {
        case DataType::int32: {
            std::int32_t value;
            return parse_number(text, value) && (builder.append(value), true);
        }
        case DataType::int64: {
            std::int64_t value;
            return parse_number(text, value) && !(inferred && spells_integer_inexactly(text))
                && (builder.append(value), true);
        }
        case DataType::float64: {
            double value;
            return parse_float64(text, value) && !(inferred && spells_integer_inexactly(text))
                && (builder.append(value), true);
        }
        case DataType::date32: {
            auto const value = parse_date32(text);
            return value.has_value() && (builder.append(*value), true);
        }
        case DataType::string: builder.append(text); return true;
        case DataType::boolean: {
            auto const value = table::parse_boolean(text);
            return value.has_value() && (builder.append(*value), true);
        }
        case DataType::timestamp_ms:
        case DataType::timestamp_us:
        case DataType::timestamp_ns:
        case DataType::timestamp_ms_utc:
        case DataType::timestamp_us_utc:
        case DataType::timestamp_ns_utc: {
            auto const timestamp = parse_timestamp(text);
            auto const ticks = timestamp ? timestamp_ticks(*timestamp, builder.type()) : std::nullopt;
            return ticks.has_value() && (builder.append(*ticks), true);
        }
    }
    return false;
}

/// How a value of `type` is spelled, for messages: empty where the type's
/// name says it.
std::string_view expected_form(DataType type) noexcept {
    if (type == DataType::boolean) {
        return " (a boolean is true or false, in any case)";
    }
    if (table::is_utc_timestamp(type)) {
        return " (expected YYYY-MM-DD HH:MM:SS, a fraction no finer than the unit, and Z, an offset such as +01:00 "
               "or none for UTC; nanoseconds reach from 1677 to 2262, microseconds about 290,000 years either way)";
    }
    if (table::is_timestamp(type)) {
        return " (expected YYYY-MM-DD HH:MM:SS and a fraction no finer than the unit, without a zone; nanoseconds "
               "reach from 1677 to 2262, microseconds about 290,000 years either way)";
    }
    return {};
}

/// The number of fields a row of `columns` columns has.
std::size_t fields_per_row(std::size_t columns, CsvOptions const& options) noexcept {
    return columns + (options.trailing_delimiter ? 1 : 0);
}

std::string expected_fields_message(std::size_t columns, std::size_t found, CsvOptions const& options) {
    return "expected " + std::to_string(columns) + " fields"
         + (options.trailing_delimiter ? std::string(" and a trailing '") + options.delimiter + "'" : std::string())
         + ", found " + std::to_string(found);
}

/// The names in the header row of `text`, and the bytes the row takes.
std::pair<std::vector<std::string>, std::size_t> read_header(std::string_view text, CsvOptions const& options,
                                                             CsvErrors const& errors) {
    std::vector<std::string> names;
    CsvScanner scanner(text, options, errors);
    auto const end = scanner.scan(
        1, CsvScanner::all_fields,
        [&](std::size_t, std::string_view value, bool, std::size_t) { names.emplace_back(value); },
        [](std::size_t, std::size_t, std::size_t, bool) {});
    if (options.trailing_delimiter && !names.empty() && names.back().empty()) {
        names.pop_back();
    }
    return {std::move(names), end};
}

/// The narrowest type that holds every non-null value of each column in the
/// first `options.infer_rows` rows of a file: int64, float64, date32,
/// timestamp_us (timestamp_ns where a fraction has more than 6 digits; `_utc`
/// where every value names a zone), boolean (`true` and `false` in any case) or string,
/// from texts of whole rows scanned one after another. With no
/// `names`, the columns are named after the first row. Rows with the wrong
/// number of fields are passed over: parsing reports them.
class TypeInference {
  public:
    TypeInference(std::vector<std::string> names, CsvOptions const& options)
        : names_(std::move(names)), columns_(names_.size()), options_(options) {}

    /// Scans the rows of `text` until `options.infer_rows` rows in all are.
    void scan(std::string_view text, CsvErrors const& errors) {
        CsvScanner scanner(text, options_, errors);
        scanner.scan(
            options_.infer_rows - rows_, CsvScanner::all_fields,
            [&](std::size_t field, std::string_view value, bool quoted, std::size_t) {
                if (field == 0) {
                    row_.clear();
                }
                row_.resize(field + 1);
                if (value.empty() && !quoted) {
                    return;  // a null fits every type
                }
                // Digits that spell an integer other than exactly (`042`,
                // `-0`) make a string: a number would hash as another key
                // than the same text in a column of strings does.
                std::int64_t integer;
                double real;
                bool const integer_text = parse_number(value, integer);
                bool const exact = integer_text && table::spelled_integer(value).has_value();
                auto const date = parse_date32(value);
                auto const timestamp = date ? std::nullopt : parse_timestamp(value);
                auto const fits = [&timestamp](DataType unit) {
                    return timestamp && timestamp_ticks(*timestamp, unit).has_value();
                };
                row_[field] = {.int64 = exact,
                               .float64 = integer_text == exact && parse_float64(value, real),
                               .date32 = date.has_value(),
                               .timestamp = timestamp.has_value(),
                               .microseconds = fits(DataType::timestamp_us_utc),
                               .nanoseconds = fits(DataType::timestamp_ns_utc),
                               .boolean = table::parse_boolean(value).has_value(),
                               .seen = true,
                               .zoned = timestamp && timestamp->has_zone,
                               .zoneless = timestamp && !timestamp->has_zone,
                               .nine_digits = timestamp && timestamp->fraction_digits > 6};
            },
            [&](std::size_t, std::size_t, std::size_t fields, bool last_empty) {
                ++rows_;
                if (columns_ == 0) {
                    columns_ = fields - (options_.trailing_delimiter && fields > 1 ? 1 : 0);
                }
                if (fields != fields_per_row(columns_, options_) || (options_.trailing_delimiter && !last_empty)) {
                    return;  // parsing reports it (or skips it); it tells nothing about the types
                }
                candidates_.resize(std::max(candidates_.size(), row_.size()));
                for (std::size_t field = 0; field < row_.size(); ++field) {
                    candidates_[field].int64 = candidates_[field].int64 && row_[field].int64;
                    candidates_[field].float64 = candidates_[field].float64 && row_[field].float64;
                    candidates_[field].date32 = candidates_[field].date32 && row_[field].date32;
                    candidates_[field].timestamp = candidates_[field].timestamp && row_[field].timestamp;
                    candidates_[field].microseconds = candidates_[field].microseconds && row_[field].microseconds;
                    candidates_[field].nanoseconds = candidates_[field].nanoseconds && row_[field].nanoseconds;
                    candidates_[field].boolean = candidates_[field].boolean && row_[field].boolean;
                    candidates_[field].seen = candidates_[field].seen || row_[field].seen;
                    candidates_[field].zoned = candidates_[field].zoned || row_[field].zoned;
                    candidates_[field].zoneless = candidates_[field].zoneless || row_[field].zoneless;
                    candidates_[field].nine_digits = candidates_[field].nine_digits || row_[field].nine_digits;
                }
            });
    }

    /// Whether `options.infer_rows` rows have been scanned.
    [[nodiscard]] bool done() const noexcept { return rows_ >= options_.infer_rows; }
    /// The rows scanned.
    [[nodiscard]] std::size_t rows() const noexcept { return rows_; }

    /// The columns, typed by the rows scanned.
    [[nodiscard]] Schema schema() const {
        std::vector<Field> fields;
        for (std::size_t index = 0; index < columns_; ++index) {
            auto const candidate = index < candidates_.size() ? candidates_[index] : Candidates{};
            auto const type = !candidate.seen     ? DataType::string
                            : candidate.int64    ? DataType::int64
                            : candidate.float64  ? DataType::float64
                            : candidate.date32   ? DataType::date32
                            : candidate.timestamp ? timestamp_type(candidate)
                            : candidate.boolean  ? DataType::boolean
                                                 : DataType::string;
            fields.push_back({index < names_.size() ? names_[index] : "column" + std::to_string(index), type});
        }
        return Schema(std::move(fields));
    }

  private:
    /// The types every value of a column seen so far fits, and whether its
    /// timestamps name zones.
    struct Candidates {
        bool int64 = true;
        bool float64 = true;
        bool date32 = true;
        bool timestamp = true;     ///< spelled as a timestamp
        bool microseconds = true;  ///< a timestamp that a timestamp_us holds
        bool nanoseconds = true;   ///< a timestamp that a timestamp_ns holds
        bool boolean = true;
        bool seen = false;         ///< a value that is not null
        bool zoned = false;        ///< a timestamp that names a zone
        bool zoneless = false;     ///< a timestamp that names none
        bool nine_digits = false;  ///< a timestamp whose fraction has more than 6 digits
    };

    /// The type of a column of timestamps: timestamp_ns where a fraction has
    /// more than 6 digits (as nanoseconds are written, even where the last
    /// three are zeros), else timestamp_us; `_utc` where they name zones.
    /// String where that unit does not hold them all, or where some name a
    /// zone and others do not, since those are no one type.
    static DataType timestamp_type(Candidates const& candidate) noexcept {
        if ((candidate.zoned && candidate.zoneless)
            || !(candidate.nine_digits ? candidate.nanoseconds : candidate.microseconds))
        {
            return DataType::string;
        }
        if (candidate.nine_digits) {
            return candidate.zoned ? DataType::timestamp_ns_utc : DataType::timestamp_ns;
        }
        return candidate.zoned ? DataType::timestamp_us_utc : DataType::timestamp_us;
    }

    std::vector<std::string> names_;
    std::size_t columns_;
    CsvOptions const& options_;
    std::vector<Candidates> candidates_;
    std::vector<Candidates> row_;  ///< what each value of the row being scanned fits
    std::size_t rows_ = 0;
};

/// Appends to `out` the row of `text` in [begin, end), whose fields start at
/// `field_starts`, with its fields in `field_order`, then the trailing
/// delimiter if the dialect has one and the row's line break.
void rewrite_row(std::string_view text, std::size_t begin, std::size_t end, std::span<std::size_t const> field_starts,
                 std::span<std::size_t const> field_order, CsvOptions const& options, std::vector<char>& out) {
    auto const line_break = text.substr(begin, end - begin).ends_with("\r\n") ? std::string_view("\r\n")
                                                                             : std::string_view("\n");
    auto const content_end = end - line_break.size();
    for (std::size_t output = 0; output < field_order.size(); ++output) {
        auto const field = field_order[output];
        auto const field_end = field + 1 < field_starts.size() ? field_starts[field + 1] - 1 : content_end;
        if (output != 0) {
            out.push_back(options.delimiter);
        }
        out.insert(out.end(), text.begin() + static_cast<std::ptrdiff_t>(field_starts[field]),
                   text.begin() + static_cast<std::ptrdiff_t>(field_end));
    }
    if (options.trailing_delimiter) {
        out.push_back(options.delimiter);
    }
    out.insert(out.end(), line_break.begin(), line_break.end());
}

}  // namespace

std::vector<std::string> CsvRows::split(std::span<std::uint32_t const> partition_of_row,
                                        std::uint32_t partitions) const {
    SPILLWAY_EXPECTS(partition_of_row.size() == size(),
                     partition_of_row.size() << " partition ids for " << size() << " CSV rows", InvalidArgument);
    SPILLWAY_EXPECTS(partitions > 0, "splitting into 0 partitions; give at least 1", InvalidArgument);
    std::vector<std::size_t> bytes(partitions, 0);
    for (std::size_t index = 0; index < size(); ++index) {
        SPILLWAY_EXPECTS(partition_of_row[index] < partitions,
                         "partition id " << partition_of_row[index] << " is out of range for " << partitions
                                         << " partitions",
                         InvalidArgument);
        bytes[partition_of_row[index]] += ends[index] - begins[index];
    }
    std::vector<std::string> parts(partitions);
    for (std::uint32_t partition = 0; partition < partitions; ++partition) {
        parts[partition].reserve(bytes[partition]);
    }
    for (std::size_t index = 0; index < size(); ++index) {
        parts[partition_of_row[index]].append(row(index));
    }
    return parts;
}

TableChecksum CsvRows::checksum() const noexcept {
    TableChecksum checksum;
    for (std::size_t index = 0; index < size(); ++index) {
        auto line = row(index);
        line.remove_suffix(line.ends_with("\r\n") ? 2 : 1);
        checksum.add(XXH3_64bits_withSeed(line.data(), line.size(), checksum_hash_seed));
    }
    return checksum;
}

CsvBlock::CsvBlock(std::shared_ptr<detail::CsvSource const> source, std::unique_ptr<char[]> text, std::size_t size,
                   std::uint64_t first_line, std::size_t line_breaks)
    : source_(std::move(source)),
      text_(std::move(text)),
      size_(size),
      first_line_(first_line),
      line_breaks_(line_breaks) {}

Table CsvBlock::parse() const {
    std::vector<std::size_t> columns(source_->schema.size());
    for (std::size_t index = 0; index < columns.size(); ++index) {
        columns[index] = index;
    }
    return parse_rows(columns, true, {}).columns;
}

CsvRows CsvBlock::parse_columns(std::span<std::size_t const> columns) const {
    return parse_rows(columns, false, {});
}

CsvRows CsvBlock::parse_columns(std::span<std::size_t const> columns, std::span<std::size_t const> field_order) const {
    auto const& schema = source_->schema;
    std::vector<bool> seen(schema.size(), false);
    for (auto const field : field_order) {
        SPILLWAY_EXPECTS(field < schema.size() && !seen[field],
                         "a field order must name each of the " << schema.size() << " columns once", InvalidArgument);
        seen[field] = true;
    }
    SPILLWAY_EXPECTS(field_order.size() == schema.size(),
                     "a field order must name each of the " << schema.size() << " columns once", InvalidArgument);
    return parse_rows(columns, true, field_order);
}

CsvRows CsvBlock::parse_rows(std::span<std::size_t const> columns, bool all_fields,
                             std::span<std::size_t const> field_order) const {
    auto const& schema = source_->schema;
    auto const& options = source_->options;
    std::vector<std::size_t> slot_of_field(schema.size(), no_slot);
    std::vector<Field> fields;
    std::vector<ColumnBuilder> builders;
    std::vector<char> inferred;  // of each slot's column
    for (std::size_t slot = 0; slot < columns.size(); ++slot) {
        auto const column = columns[slot];
        SPILLWAY_EXPECTS(column < schema.size(),
                         "column " << column << " of a CSV file with " << schema.size() << " columns", InvalidArgument);
        SPILLWAY_EXPECTS(slot_of_field[column] == no_slot, "column " << column << " is selected twice", InvalidArgument);
        slot_of_field[column] = slot;
        fields.push_back(schema.field(column));
        builders.emplace_back(fields.back().type).reserve(line_breaks_);
        inferred.push_back(static_cast<char>(!source_->inferred.empty() && source_->inferred[column]));
    }
    auto const expected_fields = fields_per_row(schema.size(), options);
    auto const last_field = all_fields || columns.empty() ? CsvScanner::all_fields : *std::ranges::max_element(columns);
    CsvRows rows;
    rows.text = text();
    rows.begins.reserve(line_breaks_);
    rows.ends.reserve(line_breaks_);
    CsvErrors const errors(source_->path, text(), first_line_);
    // A value that does not parse is reported once its row is known to have
    // the right number of fields: a row that does not is reported as such.
    struct Unparsed {
        std::size_t position;
        std::string message;
        std::size_t field;
    };
    std::optional<Unparsed> unparsed;
    bool const reordering = !field_order.empty();
    std::vector<std::size_t> field_starts;  // of the row being scanned, when reordering
    if (reordering) {
        rows.rewritten.reserve(size_ + size_ / 16);
    }
    CsvScanner scanner(text(), options, errors);
    scanner.scan(
        std::numeric_limits<std::size_t>::max(), last_field,
        [&](std::size_t field, std::string_view value, bool quoted, std::size_t position) {
            if (reordering) {
                field_starts.resize(field + 1);
                field_starts[field] = position;
            }
            if (field >= slot_of_field.size()) {
                return;
            }
            auto const slot = slot_of_field[field];
            if (slot != no_slot && !append_field(builders[slot], value, quoted, inferred[slot] != 0) && !unparsed) {
                auto const form = inferred[slot] != 0 && spells_integer_inexactly(value)
                                    ? std::string(" (a column whose type was inferred takes integers spelled exactly: "
                                                  "042 and -0 are text, keys other than 42 and 0)")
                                    : std::string(expected_form(schema.field(field).type));
                unparsed = Unparsed{position,
                                    "column '" + schema.field(field).name + "': cannot parse " + quoted_excerpt(value)
                                        + " as " + std::string(to_string(schema.field(field).type)) + form,
                                    field};
            }
        },
        [&](std::size_t begin, std::size_t end, std::size_t found, bool last_empty) {
            if (found != expected_fields || (options.trailing_delimiter && !last_empty)) {
                if (options.bad_rows == CsvOptions::BadRows::fail) {
                    errors.fail(begin, expected_fields_message(schema.size(), found, options));
                }
                for (auto& builder : builders) {
                    builder.truncate(rows.size());
                }
                ++rows.skipped_rows;
                unparsed.reset();
                return;
            }
            if (unparsed) {
                errors.fail_value(unparsed->position, unparsed->message, schema.field(unparsed->field).name);
            }
            if (reordering) {
                auto const rewritten_begin = rows.rewritten.size();
                rewrite_row(text(), begin, end, field_starts, field_order, options, rows.rewritten);
                rows.begins.push_back(static_cast<std::uint32_t>(rewritten_begin));
                rows.ends.push_back(static_cast<std::uint32_t>(rows.rewritten.size()));
                return;
            }
            rows.begins.push_back(static_cast<std::uint32_t>(begin));
            rows.ends.push_back(static_cast<std::uint32_t>(end));
        });
    if (reordering) {
        rows.text = std::string_view(rows.rewritten.data(), rows.rewritten.size());
    }
    std::vector<Column> parsed;
    parsed.reserve(builders.size());
    for (auto& builder : builders) {
        parsed.push_back(builder.finish());
    }
    rows.columns = Table(Schema(std::move(fields)), std::move(parsed));
    return rows;
}

CsvReader::CsvReader(std::filesystem::path path, CsvOptions options, std::optional<Schema> schema,
                     std::vector<bool> inferred)
    : path_(path.string()), options_(options) {
    options_.validate();
    descriptor_ = FileDescriptor(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    SPILLWAY_EXPECTS(descriptor_, "cannot open CSV file '" << path_ << "': " << std::strerror(errno), IoError);
    static_cast<void>(::posix_fadvise(descriptor_.get(), 0, 0, POSIX_FADV_SEQUENTIAL));
    pending_ = std::make_unique_for_overwrite<char[]>(options_.chunk_bytes + 1);
    fill();
    check_start_of_file();

    std::vector<std::string> names;
    if (options_.header && pending_size_ != 0) {
        auto const rows_end = complete_rows();
        CsvErrors const errors(path_, std::string_view(pending_.get(), rows_end), next_line_);
        auto [header, header_bytes] = read_header(std::string_view(pending_.get(), rows_end), options_, errors);
        names = std::move(header);
        header_line_.assign(pending_.get(), header_bytes);
        SPILLWAY_EXPECTS(header_line_ != "\n" && header_line_ != "\r\n",
                         path_ << ":1: the header line is empty; its first line names the columns", CorruptData);
        next_line_ += detail::count_line_breaks(std::string_view(pending_.get(), header_bytes));
        drop_pending(header_bytes);
    }
    if (schema.has_value()) {
        SPILLWAY_EXPECTS(inferred.empty() || inferred.size() == schema->size(),
                         "the schema has " << schema->size() << " columns, but " << inferred.size()
                                           << " are said to be inferred or not",
                         InvalidArgument);
        SPILLWAY_EXPECTS(names.empty() || names.size() == schema->size(),
                         path_ << ":1: the header has " << names.size() << " columns but the schema has "
                               << schema->size() << " (" << schema->to_string() << ")",
                         CorruptData);
    } else if (pending_size_ == 0 && names.empty()) {
        schema = Schema();  // an empty file (a byte order mark at most): no columns
    } else {
        std::unordered_set<std::string_view> seen;
        for (auto const& name : names) {
            SPILLWAY_EXPECTS(seen.insert(name).second,
                             path_ << ":1: two columns are named '" << name << "'; each column needs a name of its own",
                             CorruptData);
        }
        schema = infer_schema(std::move(names));
        inferred.assign(schema->size(), true);
    }
    source_ = std::make_shared<detail::CsvSource const>(
        detail::CsvSource{path_, options_, std::move(*schema), std::move(inferred)});
}

CsvReader::~CsvReader() = default;

Schema CsvReader::infer_schema(std::vector<std::string> names) {
    TypeInference inference(std::move(names), options_);
    auto rows_end = pending_size_ == 0 ? 0 : complete_rows();
    inference.scan(std::string_view(pending_.get(), rows_end), CsvErrors(path_, {pending_.get(), rows_end}, next_line_));
    // The first chunk may hold fewer rows than inference looks at (wide rows,
    // a small chunk): read on with the same buffer, then read again from
    // where the rows start. A file that cannot seek (a pipe) keeps what its
    // first chunk tells; a row longer than a chunk ends the reading on, and
    // `read_block` reports it when it comes to it.
    auto const position = ::lseek(descriptor_.get(), 0, SEEK_CUR);
    if (!inference.done() && !end_of_file_ && position >= 0) {
        auto const rows_start = position - static_cast<off_t>(pending_size_);
        auto line = next_line_;
        while (!inference.done() && rows_end != 0) {
            line += detail::count_line_breaks(std::string_view(pending_.get(), rows_end));
            drop_pending(rows_end);
            rows_end = detail::end_of_last_row(std::string_view(pending_.get(), pending_size_), options_.quote);
            inference.scan(std::string_view(pending_.get(), rows_end),
                           CsvErrors(path_, {pending_.get(), rows_end}, line));
        }
        SPILLWAY_EXPECTS(::lseek(descriptor_.get(), rows_start, SEEK_SET) == rows_start,
                         "cannot read CSV file '" << path_ << "' again from its first row: " << std::strerror(errno),
                         IoError);
        pending_size_ = 0;
        end_of_file_ = false;
        added_line_break_ = false;
        fill();
    }
    inferred_rows_ = inference.rows();
    return inference.schema();
}

std::size_t CsvReader::inferred_rows() const noexcept { return inferred_rows_; }

Schema const& CsvReader::schema() const noexcept { return source_->schema; }

std::string const& CsvReader::header_line() const noexcept { return header_line_; }

void CsvReader::fill() {
    while (!end_of_file_ && pending_size_ < options_.chunk_bytes) {
        auto const count = ::read(descriptor_.get(), pending_.get() + pending_size_, options_.chunk_bytes - pending_size_);
        if (count < 0 && errno == EINTR) {
            continue;
        }
        SPILLWAY_EXPECTS(count >= 0, "cannot read CSV file '" << path_ << "': " << std::strerror(errno), IoError);
        end_of_file_ = count == 0;
        pending_size_ += static_cast<std::size_t>(count);
    }
    if (end_of_file_ && pending_size_ != 0 && pending_[pending_size_ - 1] != '\n') {
        pending_[pending_size_++] = '\n';  // the buffer has one byte to spare for this
        added_line_break_ = true;
    }
}

void CsvReader::drop_pending(std::size_t bytes) {
    std::memmove(pending_.get(), pending_.get() + bytes, pending_size_ - bytes);
    pending_size_ -= bytes;
    fill();
}

void CsvReader::check_start_of_file() {
    std::string_view const start(pending_.get(), pending_size_);
    if (auto const kind = detail::binary_kind(start)) {
        SPILLWAY_FAIL("'" << path_ << "' is " << kind->what << "; " << kind->remedy, CorruptData);
    }
    if (start.starts_with(detail::byte_order_mark)) {
        drop_pending(detail::byte_order_mark.size());
        if (added_line_break_ && pending_size_ == 1) {
            pending_size_ = 0;  // the file is the mark alone: empty
        }
    }
}

std::size_t CsvReader::complete_rows() const {
    auto const end = detail::end_of_last_row(std::string_view(pending_.get(), pending_size_), options_.quote);
    SPILLWAY_EXPECTS(end != 0,
                     path_ << ':' << next_line_ << ": no row ends within " << options_.chunk_bytes
                           << " bytes: a quote is not closed, or a row is longer than the chunk size; raise "
                              "csv_chunk_bytes for longer rows",
                     CorruptData);
    return end;
}

std::optional<CsvBlock> CsvReader::read_block() {
    fill();
    if (pending_size_ == 0) {
        return std::nullopt;
    }
    auto const end = complete_rows();
    auto rest = std::make_unique_for_overwrite<char[]>(options_.chunk_bytes + 1);
    std::memcpy(rest.get(), pending_.get() + end, pending_size_ - end);
    auto const line_breaks = detail::count_line_breaks(std::string_view(pending_.get(), end));
    CsvBlock block(source_, std::move(pending_), end, next_line_, line_breaks);
    pending_ = std::move(rest);
    pending_size_ -= end;
    next_line_ += line_breaks;
    return block;
}

std::optional<Table> CsvReader::read() {
    auto block = read_block();
    if (!block.has_value()) {
        return std::nullopt;
    }
    return block->parse();
}

}  // namespace spillway::io
