#include <spillway/io/csv_options.hpp>

#include <limits>
#include <string>

#include <spillway/core/error.hpp>

namespace spillway::io {
namespace {

constexpr std::size_t min_chunk_bytes = 64;

/// The single character `text` names: itself, or `tab`. `others` names
/// what else the option takes, for the message.
char parse_character(std::string const& text, std::string_view option, std::string_view others = "or 'tab'") {
    if (text == "tab" || text == "\\t") {
        return '\t';
    }
    SPILLWAY_EXPECTS(text.size() == 1,
                     "option " << option << " must be one character (" << others << "), got '" << text << "'",
                     InvalidArgument);
    return text.front();
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
        result.delimiter = parse_character(value->text, "csv_delimiter");
    }
    if (auto const value = options.find("csv_quote")) {
        result.quote = value->text == "none" ? std::nullopt
                                             : std::optional(parse_character(value->text, "csv_quote",
                                                                             "'none' for no quoting, or 'tab'"));
    }
    result.header = options.get_bool("csv_header", defaults.header);
    result.trailing_delimiter = options.get_bool("csv_trailing_delimiter", defaults.trailing_delimiter);
    result.chunk_bytes = options.get_bytes("csv_chunk_bytes", defaults.chunk_bytes);
    result.infer_rows = static_cast<std::size_t>(options.get_int(
        "csv_infer_rows", static_cast<std::int64_t>(defaults.infer_rows), 1, std::numeric_limits<std::int32_t>::max()
    ));
    if (auto const value = options.find("csv_bad_rows")) {
        SPILLWAY_EXPECTS(value->text == "fail" || value->text == "skip",
                         "option csv_bad_rows must be 'fail' or 'skip', got '" << value->text << "'", InvalidArgument);
        result.bad_rows = value->text == "skip" ? BadRows::skip : BadRows::fail;
    }
    result.validate();
    return result;
}

void CsvOptions::validate() const {
    auto const is_line_break = [](char character) { return character == '\n' || character == '\r'; };
    SPILLWAY_EXPECTS(!is_line_break(delimiter), "the CSV delimiter cannot be a line break (csv_delimiter)",
                     InvalidArgument);
    SPILLWAY_EXPECTS(!quote || (!is_line_break(*quote) && *quote != delimiter),
                     "the CSV quote '" << describe(quote.value_or(' '))
                                       << "' must differ from the delimiter and line breaks (csv_quote)",
                     InvalidArgument);
    SPILLWAY_EXPECTS(chunk_bytes >= min_chunk_bytes && chunk_bytes <= max_chunk_bytes,
                     "CSV chunk size " << chunk_bytes << " is out of range [" << min_chunk_bytes << ", "
                                       << max_chunk_bytes << "] (csv_chunk_bytes)",
                     InvalidArgument);
    SPILLWAY_EXPECTS(infer_rows > 0, "csv_infer_rows must be at least 1", InvalidArgument);
}

}  // namespace spillway::io
