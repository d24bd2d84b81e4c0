#pragma once
/// @file
/// Splits CSV text into rows and fields, fast: line breaks, delimiters and
/// quotes are found with memchr.

#include <cstddef>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/io/csv_options.hpp>
#include <spillway/table/schema.hpp>

namespace spillway::io::detail {

/// What every block of one file shares.
struct CsvSource {
    std::string path;
    CsvOptions options;
    table::Schema schema;
    /// Per column of `schema`: whether its type was inferred, so that its
    /// numbers must be spelled as inference requires (`042` and `-0` are
    /// no numbers there); empty: none was.
    std::vector<bool> inferred = {};
};

/// Raises `CorruptData` for a position in a block, naming the file and line.
class CsvErrors {
  public:
    CsvErrors(std::string_view path, std::string_view text, std::uint64_t first_line) noexcept
        : path_(path), text_(text), first_line_(first_line) {}

    /// Throws `CorruptData` with `message`, prefixed by `path:line: ` for the
    /// line that holds byte `position` of the text.
    [[noreturn]] void fail(std::size_t position, std::string_view message) const;
    /// As `fail`, but throws `CsvValueError` for a value of column `column`.
    [[noreturn]] void fail_value(std::size_t position, std::string_view message, std::string const& column) const;

  private:
    /// `path:line: message` for the line that holds byte `position`.
    [[nodiscard]] std::string locate(std::size_t position, std::string_view message) const;

    std::string_view path_;
    std::string_view text_;
    std::uint64_t first_line_;  ///< the line of the text's first byte
};

/// The number of `\n` in `text`.
std::size_t count_line_breaks(std::string_view text) noexcept;

/// The end of the last whole row in `text` (just after its `\n`), counting
/// only line breaks outside quotes; 0 if there is none.
std::size_t end_of_last_row(std::string_view text, std::optional<char> quote) noexcept;

/// Splits whole rows of CSV text into fields.
///
/// Every search is a memchr: for the line break that ends a row, the
/// delimiter that ends a field, and the next quote character. A quote found
/// once is remembered until the scan passes it, so text without quotes costs
/// one search for them in all, and text with some pays only where they are.
///
/// Requires: the text is whole rows, each ending with `\n`.
class CsvScanner {
  public:
    /// Passed as `last_field` to scan every field of every row.
    static constexpr std::size_t all_fields = std::numeric_limits<std::size_t>::max();

    CsvScanner(std::string_view text, CsvOptions const& options, CsvErrors const& errors) noexcept
        : begin_(text.data()), end_(text.data() + text.size()), options_(options), errors_(errors) {}

    /// Scans up to `max_rows` rows. For each field up to `last_field` (and
    /// for each field of a row whose rest holds a quote) calls
    /// `on_field(index, value, quoted, position)` (the value, unquoted and
    /// unescaped, is valid during the call only), then for each row
    /// `on_row(begin, end, fields, last_empty)` with the row's byte range, its
    /// number of fields and whether its last field is empty and unquoted.
    /// The fields after `last_field` of a row without quotes are only
    /// counted, by their delimiters. Returns the end of the last row scanned.
    /// @throws CorruptData on malformed quoting.
    template <typename OnField, typename OnRow>
    std::size_t scan(std::size_t max_rows, std::size_t last_field, OnField&& on_field, OnRow&& on_row) {
        char const* position = begin_;
        next_quote_ = find_quote(position);
        for (std::size_t rows = 0; position < end_ && rows < max_rows; ++rows) {
            char const* const row = position;
            char const* line_break = find(position, '\n');
            SPILLWAY_ASSERT(line_break != nullptr, "CSV text must end with a line break");
            std::size_t field = 0;
            bool last_empty = false;
            while (true) {
                auto const offset = static_cast<std::size_t>(position - begin_);
                if (position == next_quote_) {
                    auto const value = quoted_value(position);
                    if (position > line_break) {  // the line break was inside the quotes
                        line_break = find(position, '\n');
                        SPILLWAY_ASSERT(line_break != nullptr, "CSV text must end with a line break");
                    }
                    if (*position == '\r' && position + 1 == line_break) {
                        ++position;
                    }
                    if (*position != options_.delimiter && position != line_break) {
                        errors_.fail(static_cast<std::size_t>(position - begin_),
                                     "unexpected character after a closing quote; a quote inside a quoted field "
                                     "must be doubled");
                    }
                    on_field(field, value, true, offset);
                    last_empty = false;
                } else {
                    char const* const content_end =
                        line_break > position && line_break[-1] == '\r' ? line_break - 1 : line_break;
                    char const* delimiter = find(position, content_end, options_.delimiter);
                    char const* const field_end = delimiter != nullptr ? delimiter : content_end;
                    if (next_quote_ != nullptr && next_quote_ < field_end) {
                        errors_.fail(static_cast<std::size_t>(next_quote_ - begin_),
                                     "a quote inside an unquoted field; quote the whole field, or read without "
                                     "quoting (csv_quote=none)");
                    }
                    on_field(field, std::string_view(position, static_cast<std::size_t>(field_end - position)), false,
                             offset);
                    last_empty = field_end == position;
                    position = delimiter != nullptr ? delimiter : line_break;
                }
                ++field;
                if (position == line_break) {
                    break;
                }
                ++position;  // past the delimiter
                if (field > last_field && (next_quote_ == nullptr || next_quote_ > line_break)) {
                    char const* const content_end = line_break[-1] == '\r' ? line_break - 1 : line_break;
                    field += 1 + count(position, content_end, options_.delimiter);
                    last_empty = position == content_end || content_end[-1] == options_.delimiter;
                    break;
                }
            }
            position = line_break + 1;
            on_row(static_cast<std::size_t>(row - begin_), static_cast<std::size_t>(position - begin_), field,
                   last_empty);
        }
        return static_cast<std::size_t>(position - begin_);
    }

  private:
    /// The first `character` in [from, to), or null.
    static char const* find(char const* from, char const* to, char character) noexcept {
        return static_cast<char const*>(std::memchr(from, character, static_cast<std::size_t>(to - from)));
    }
    char const* find(char const* from, char character) const noexcept { return find(from, end_, character); }
    /// The number of `character` in [from, to).
    static std::size_t count(char const* from, char const* to, char character) noexcept {
        std::size_t found = 0;
        for (; from < to; ++from) {
            found += *from == character ? 1 : 0;
        }
        return found;
    }
    /// The first quote character at or after `from`, or null.
    char const* find_quote(char const* from) const noexcept {
        return options_.quote.has_value() ? find(from, *options_.quote) : nullptr;
    }

    /// The value of the quoted field at `position`, which moves past its
    /// closing quote; remembers the next quote after it. Doubled quotes
    /// become one, in `scratch_`.
    std::string_view quoted_value(char const*& position) {
        char const quote = *options_.quote;
        char const* const opening = position;
        char const* content = position + 1;
        bool escaped = false;
        scratch_.clear();
        while (true) {
            char const* const closing = find(content, quote);
            if (closing == nullptr) {
                errors_.fail(static_cast<std::size_t>(opening - begin_), "a quoted field is not closed");
            }
            if (closing + 1 < end_ && closing[1] == quote) {
                scratch_.append(content, closing + 1);
                content = closing + 2;
                escaped = true;
                continue;
            }
            position = closing + 1;
            next_quote_ = find_quote(position);
            if (!escaped) {
                return {opening + 1, static_cast<std::size_t>(closing - opening - 1)};
            }
            scratch_.append(content, closing);
            return scratch_;
        }
    }

    char const* begin_;
    char const* end_;
    CsvOptions const& options_;
    CsvErrors const& errors_;
    char const* next_quote_ = nullptr;  ///< the first quote at or after the scan position, or null if none
    std::string scratch_;               ///< the value of a quoted field with doubled quotes
};

}  // namespace spillway::io::detail
