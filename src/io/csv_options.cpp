#include <spillway/io/csv_options.hpp>

#include <limits>
#include <string>

#include <spillway/core/ascii_case.hpp>
#include <spillway/core/error.hpp>

namespace spillway::io {
namespace {

/// The single character `value` of option `option` names: itself, or
/// `tab`. `others` names what else the option takes, for the message.
char parse_character(Options::Value const& value, std::string_view option, std::string_view others = "or 'tab'") {
    if (equals_ignoring_case(value.text, "tab") || value.text == "\\t") {
        return '\t';
    }
    SPILLWAY_EXPECTS(value.text.size() == 1,
                     Options::describe(option, value.source) << ": invalid value '" << value.text
                                                              << "': expected one character (" << others << ")",
                     InvalidArgument);
    return value.text.front();
}

std::string describe(char character) {
    switch (character) {
        case '\n': return "\\n";
        case '\r': return "\\r";
        case '\t': return "tab";
        default: return std::string(1, character);
    }
}

}  // namespace

CsvOptions CsvOptions::tbl() noexcept {
    CsvOptions options;
    options.delimiter = '|';
    options.quote = std::nullopt;
    options.header = false;
    options.trailing_delimiter = true;
    return options;
}

CsvOptions CsvOptions::from_options(Options const& options, CsvOptions const& defaults) {
    auto result = defaults;
    if (auto const value = options.find("csv_delimiter")) {
        result.delimiter = parse_character(*value, "csv_delimiter");
    }
    if (auto const value = options.find("csv_quote")) {
        result.quote = equals_ignoring_case(value->text, "none")
                         ? std::nullopt
                         : std::optional(parse_character(*value, "csv_quote", "'none' for no quoting, or 'tab'"));
    }
    result.header = options.get_bool("csv_header", defaults.header);
    result.trailing_delimiter = options.get_bool("csv_trailing_delimiter", defaults.trailing_delimiter);
    result.chunk_bytes = options.get_bytes("csv_chunk_bytes", defaults.chunk_bytes);
    if (auto const value = options.find("csv_chunk_bytes")) {
        SPILLWAY_EXPECTS(result.chunk_bytes >= min_chunk_bytes && result.chunk_bytes <= max_chunk_bytes,
                         Options::describe("csv_chunk_bytes", value->source)
                             << ": invalid value '" << value->text << "': expected a size from "
                             << format_bytes(min_chunk_bytes) << " to " << format_bytes(max_chunk_bytes),
                         InvalidArgument);
    }
    result.infer_rows = static_cast<std::size_t>(options.get_int(
        "csv_infer_rows", static_cast<std::int64_t>(defaults.infer_rows), 1, std::numeric_limits<std::int32_t>::max()
    ));
    auto const bad_rows = options.get_choice("csv_bad_rows", {"fail", "skip"},
                                             defaults.bad_rows == BadRows::skip ? "skip" : "fail");
    result.bad_rows = bad_rows == "skip" ? BadRows::skip : BadRows::fail;
    result.validate();
    return result;
}

void CsvOptions::validate() const {
    auto const is_line_break = [](char character) { return character == '\n' || character == '\r'; };
    // Numbers and dates are written unquoted, with these characters.
    auto const writes_values = [](char character) {
        auto const letter = static_cast<char>(character | 0x20);  // ASCII only, whatever the locale
        return (character >= '0' && character <= '9') || (letter >= 'a' && letter <= 'z') || character == '+'
            || character == '-' || character == '.';
    };
    SPILLWAY_EXPECTS(!is_line_break(delimiter), "the CSV delimiter cannot be a line break (csv_delimiter)",
                     InvalidArgument);
    SPILLWAY_EXPECTS(!writes_values(delimiter),
                     "the CSV delimiter '" << delimiter
                                           << "' cannot be a letter, a digit, '+', '-' or '.', which numbers and "
                                              "dates are made of (csv_delimiter)",
                     InvalidArgument);
    SPILLWAY_EXPECTS(!quote || *quote != delimiter,
                     "the CSV quote and delimiter are both '" << describe(delimiter)
                                                              << "'; they must differ (csv_quote, csv_delimiter)",
                     InvalidArgument);
    SPILLWAY_EXPECTS(!quote || !is_line_break(*quote),
                     "the CSV quote '" << describe(quote.value_or(' ')) << "' cannot be a line break (csv_quote)",
                     InvalidArgument);
    SPILLWAY_EXPECTS(!quote || !writes_values(*quote),
                     "the CSV quote '" << *quote
                                       << "' cannot be a letter, a digit, '+', '-' or '.', which numbers and dates "
                                          "are made of (csv_quote)",
                     InvalidArgument);
    SPILLWAY_EXPECTS(chunk_bytes >= min_chunk_bytes && chunk_bytes <= max_chunk_bytes,
                     "CSV chunk size " << chunk_bytes << " is out of range [" << min_chunk_bytes << ", "
                                       << max_chunk_bytes << "] (csv_chunk_bytes)",
                     InvalidArgument);
    SPILLWAY_EXPECTS(infer_rows > 0, "csv_infer_rows must be at least 1", InvalidArgument);
}

}  // namespace spillway::io
