#pragma once
/// @file
/// How a CSV file is laid out, for `CsvReader` and `CsvWriter`.

#include <cstddef>
#include <cstdint>
#include <optional>

#include <spillway/core/options.hpp>

namespace spillway::io {

/// The dialect of a CSV file and how it is read.
///
/// Rows end with `\n` or `\r\n`. Fields are separated by `delimiter`. With a
/// `quote` character, a field may be enclosed in quotes and then hold the
/// delimiter, line breaks and doubled quotes (RFC 4180); a quote inside an
/// unquoted field is an error. An empty unquoted field is null; a quoted
/// empty field (`""`) is the empty string. TPC-H `.tbl` files are `tbl()`.
struct CsvOptions {
    /// The smallest `chunk_bytes`.
    static constexpr std::size_t min_chunk_bytes = 64;
    /// The largest `chunk_bytes`: row offsets within a block are 32-bit.
    static constexpr std::size_t max_chunk_bytes = std::size_t{1} << 30;

    char delimiter = ',';             ///< the byte between fields
    std::optional<char> quote = '"';  ///< nothing: fields are never quoted
    bool header = true;               ///< the first row names the columns
    bool trailing_delimiter = false;  ///< every row ends with a delimiter, as in `.tbl`
    /// The bytes a reader reads at a time; a block holds whole rows of at
    /// most this many bytes, so no row may be longer.
    std::size_t chunk_bytes = std::size_t{16} << 20;
    /// The rows a reader looks at to infer column types; a row of the wrong
    /// width among them counts, but tells nothing.
    std::size_t infer_rows = 1000;
    /// What parsing does with a row that has the wrong number of fields.
    enum class BadRows : std::uint8_t {
        fail,  ///< raise `CorruptData` naming the file, the line and the counts
        skip,  ///< leave the row out and count it (`CsvRows::skipped_rows`)
    };
    BadRows bad_rows = BadRows::fail;

    /// TPC-H `.tbl`: `|`-separated, no quoting, no header, a trailing `|`.
    [[nodiscard]] static CsvOptions tbl() noexcept;

    /// `defaults` with the options `csv_delimiter` (one character, or `tab`),
    /// `csv_quote` (one character, or `none`), `csv_header`,
    /// `csv_trailing_delimiter`, `csv_chunk_bytes`, `csv_infer_rows` and
    /// `csv_bad_rows` (`fail` or `skip`) that `options` sets applied
    /// (docs/configuration.md).
    /// @throws InvalidArgument naming the option if a value is malformed, or
    /// the result fails `validate`.
    [[nodiscard]] static CsvOptions from_options(Options const& options, CsvOptions const& defaults);
    /// `from_options(options, CsvOptions())`.
    [[nodiscard]] static CsvOptions from_options(Options const& options) {
        return from_options(options, CsvOptions());
    }

    /// Checks that the delimiter and quote are distinct and neither a line
    /// break nor a character numbers and dates are written with (a letter, a
    /// digit, `+`, `-`, `.`), `chunk_bytes` is in [64, `max_chunk_bytes`] and
    /// `infer_rows` is positive.
    /// @throws InvalidArgument naming the offending setting otherwise.
    void validate() const;
};

}  // namespace spillway::io
