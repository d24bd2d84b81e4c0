#pragma once
/// @file
/// Splits CSV text into rows and fields, fast: line breaks and delimiters are
/// found with memchr, and quoted fields are handled only in text that holds
/// a quote character.

#include <cstddef>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <spillway/core/error.hpp>
#include <spillway/table/csv_options.hpp>

namespace spillway::table::detail {

/// Raises `CorruptData` for a position in a block, naming the file and line.
class CsvErrors {
  public:
    CsvErrors(std::string_view path, std::string_view text, std::uint64_t first_line) noexcept
        : path_(path), text_(text), first_line_(first_line) {}

    /// Throws `CorruptData` with `message`, prefixed by `path:line: ` for the
    /// line that holds byte `position` of the text.
    [[noreturn]] void fail(std::size_t position, std::string_view message) const;

  private:
    std::string_view path_;
    std::string_view text_;
    std::uint64_t first_line_;  ///< the line of the text's first byte
};

/// The end of the last whole row in `text` (just after its `\n`), counting
/// only line breaks outside quotes; 0 if there is none.
std::size_t end_of_last_row(std::string_view text, std::optional<char> quote) noexcept;

/// Splits whole rows of CSV text into fields.
///
/// Requires: the text is whole rows, each ending with `\n`.
class CsvScanner {
  public:
    /// Passed as `last_field` to scan every field of every row.
    static constexpr std::size_t all_fields = std::numeric_limits<std::size_t>::max();

    CsvScanner(std::string_view text, CsvOptions const& options, CsvErrors const& errors) noexcept
        : text_(text), options_(options), errors_(errors) {}

    /// Scans up to `max_rows` rows. For each field calls
    /// `on_field(index, value, quoted, position)` (the value, unquoted and
    /// unescaped, is valid during the call only), then for each row
    /// `on_row(begin, end, fields, truncated)` with the row's byte range and
    /// number of fields. In text without quotes, a row's scan stops after
    /// field `last_field` (`truncated` is then true). Returns the end of the
    /// last row scanned.
    /// @throws CorruptData on malformed quoting.
    template <typename OnField, typename OnRow>
    std::size_t scan(std::size_t max_rows, std::size_t last_field, OnField&& on_field, OnRow&& on_row) {
        bool const quoted = options_.quote.has_value()
                         && std::memchr(text_.data(), *options_.quote, text_.size()) != nullptr;
        return quoted ? scan_quoted(max_rows, on_field, on_row) : scan_plain(max_rows, last_field, on_field, on_row);
    }

  private:
    template <typename OnField, typename OnRow>
    std::size_t scan_plain(std::size_t max_rows, std::size_t last_field, OnField& on_field, OnRow& on_row) {
        char const* const begin = text_.data();
        char const* const end = begin + text_.size();
        char const* row = begin;
        for (std::size_t rows = 0; row < end && rows < max_rows; ++rows) {
            auto const* line_break = static_cast<char const*>(std::memchr(row, '\n', static_cast<std::size_t>(end - row)));
            SPILLWAY_ASSERT(line_break != nullptr, "CSV text must end with a line break");
            char const* const content_end = line_break > row && line_break[-1] == '\r' ? line_break - 1 : line_break;
            std::size_t field = 0;
            bool truncated = false;
            for (char const* start = row;;) {
                auto const* delimiter = static_cast<char const*>(
                    std::memchr(start, options_.delimiter, static_cast<std::size_t>(content_end - start)));
                char const* const field_end = delimiter != nullptr ? delimiter : content_end;
                on_field(field, std::string_view(start, static_cast<std::size_t>(field_end - start)), false,
                         static_cast<std::size_t>(start - begin));
                ++field;
                if (delimiter == nullptr) {
                    break;
                }
                if (field > last_field) {
                    truncated = true;
                    break;
                }
                start = delimiter + 1;
            }
            on_row(static_cast<std::size_t>(row - begin), static_cast<std::size_t>(line_break + 1 - begin), field,
                   truncated);
            row = line_break + 1;
        }
        return static_cast<std::size_t>(row - begin);
    }

    template <typename OnField, typename OnRow>
    std::size_t scan_quoted(std::size_t max_rows, OnField& on_field, OnRow& on_row) {
        char const quote = *options_.quote;
        char const delimiter = options_.delimiter;
        char const* const begin = text_.data();
        char const* const end = begin + text_.size();
        char const* position = begin;
        for (std::size_t rows = 0; position < end && rows < max_rows; ++rows) {
            char const* const row = position;
            std::size_t field = 0;
            while (true) {
                char const* const field_start = position;
                auto const offset = static_cast<std::size_t>(field_start - begin);
                std::string_view value;
                bool const quoted = *position == quote;
                if (quoted) {
                    value = quoted_value(position, end);
                    if (*position == '\r' && position + 1 < end && position[1] == '\n') {
                        ++position;
                    }
                    if (position == end || (*position != delimiter && *position != '\n')) {
                        errors_.fail(static_cast<std::size_t>(position - begin),
                                     "unexpected character after a closing quote; a quote inside a quoted field "
                                     "must be doubled");
                    }
                } else {
                    char const* cursor = position;
                    while (cursor < end && *cursor != delimiter && *cursor != '\n') {
                        if (*cursor == quote) {
                            errors_.fail(static_cast<std::size_t>(cursor - begin),
                                         "a quote inside an unquoted field; quote the whole field, or read without "
                                         "quoting (csv_quote=none)");
                        }
                        ++cursor;
                    }
                    SPILLWAY_ASSERT(cursor < end, "CSV text must end with a line break");
                    char const* const value_end = *cursor == '\n' && cursor > position && cursor[-1] == '\r'
                                                    ? cursor - 1
                                                    : cursor;
                    value = std::string_view(position, static_cast<std::size_t>(value_end - position));
                    position = cursor;
                }
                on_field(field, value, quoted, offset);
                ++field;
                if (*position++ == '\n') {
                    break;
                }
            }
            on_row(static_cast<std::size_t>(row - begin), static_cast<std::size_t>(position - begin), field, false);
        }
        return static_cast<std::size_t>(position - begin);
    }

    /// The value of the quoted field at `position`, which moves past its
    /// closing quote. Doubled quotes become one, in `scratch_`.
    std::string_view quoted_value(char const*& position, char const* end) {
        char const quote = *options_.quote;
        char const* const opening = position;
        char const* content = position + 1;
        bool escaped = false;
        scratch_.clear();
        while (true) {
            auto const* closing = static_cast<char const*>(std::memchr(content, quote, static_cast<std::size_t>(end - content)));
            if (closing == nullptr) {
                errors_.fail(static_cast<std::size_t>(opening - text_.data()), "a quoted field is not closed");
            }
            if (closing + 1 < end && closing[1] == quote) {
                scratch_.append(content, closing + 1);
                content = closing + 2;
                escaped = true;
                continue;
            }
            position = closing + 1;
            if (!escaped) {
                return {opening + 1, static_cast<std::size_t>(closing - opening - 1)};
            }
            scratch_.append(content, closing);
            return scratch_;
        }
    }

    std::string_view text_;
    CsvOptions const& options_;
    CsvErrors const& errors_;
    std::string scratch_;  ///< the value of a quoted field with doubled quotes
};

}  // namespace spillway::table::detail
