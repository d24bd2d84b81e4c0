#pragma once
/// @file
/// Reads CSV files in blocks of whole rows and parses them into tables.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/core/file_descriptor.hpp>
#include <spillway/io/csv_options.hpp>
#include <spillway/table/table.hpp>
#include <spillway/table/table_checksum.hpp>

namespace spillway::io {
namespace detail {
struct CsvSource;
}

/// A CSV value that does not parse as its column's type. Callers that know
/// where the type came from (inferred or declared) can say how to fix it.
class CsvValueError : public CorruptData {
  public:
    /// `message` names the file, line, column and value; `column` is the
    /// column's name.
    CsvValueError(std::string const& message, std::string column) : CorruptData(message), column_(std::move(column)) {}
    /// The name of the column whose value did not parse.
    [[nodiscard]] std::string const& column() const noexcept { return column_; }

  private:
    std::string column_;
};

/// The selected columns of a block's rows, and each row's text as it is in
/// the file, so rows can be copied verbatim: what a repartition of CSV files
/// needs. Refers to the block's text, so it must not outlive the block
/// (unless its fields were reordered). Move-only: moves keep `text` valid.
struct CsvRows {
    CsvRows() = default;
    CsvRows(CsvRows&&) noexcept = default;
    CsvRows& operator=(CsvRows&&) noexcept = default;
    CsvRows(CsvRows const&) = delete;  ///< a copy's `text` would refer to the original's `rewritten`
    CsvRows& operator=(CsvRows const&) = delete;

    /// The selected columns, in the order they were selected.
    table::Table columns;
    /// Where each row is in `text`: row `i` is
    /// `text.substr(begins[i], ends[i] - begins[i])`. Rows are in file order
    /// and do not overlap; rows left out (`skipped_rows`) leave gaps.
    std::vector<std::uint32_t> begins;
    std::vector<std::uint32_t> ends;
    /// The block's text, or `rewritten` when the rows' fields were reordered.
    std::string_view text;
    /// The rows' text with their fields reordered (`CsvBlock::parse_columns`
    /// with a field order); empty otherwise.
    std::vector<char> rewritten;
    /// Rows with the wrong number of fields that were left out
    /// (`CsvOptions::BadRows::skip`).
    std::uint64_t skipped_rows = 0;

    /// The number of rows.
    [[nodiscard]] std::size_t size() const noexcept { return begins.size(); }
    /// The text of row `row`, line break included. Requires: `row < size()`.
    [[nodiscard]] std::string_view row(std::size_t row) const noexcept {
        return text.substr(begins[row], ends[row] - begins[row]);
    }

    /// The text of the rows of each partition, in their order: element `p`
    /// holds, back to back, the rows whose `partition_of_row` is `p`.
    /// @throws InvalidArgument if `partition_of_row` does not have one entry
    /// per row or holds a value `>= partitions`, or `partitions` is 0.
    [[nodiscard]] std::vector<std::string> split(std::span<std::uint32_t const> partition_of_row,
                                                 std::uint32_t partitions) const;

    /// The checksum of the rows' text (see `TableChecksum`): each row hashed
    /// with XXH3-64 and `checksum_hash_seed` without its line break (`\n` or
    /// `\r\n`). Rows copied verbatim keep it, in any order and chunking.
    [[nodiscard]] table::TableChecksum checksum() const noexcept;
};

/// Whole rows of a CSV file as they are in the file, with what is needed to
/// parse them. Every row in the text ends with a line break (the reader adds
/// `\n` after a last row that has none).
///
/// Parsing is independent of the reader and of other blocks, so blocks can
/// be parsed on any thread while the reader reads on.
///
/// Thread safety: immutable; const member functions may be called
/// concurrently. Moves are cheap; copies are disabled.
class CsvBlock {
  public:
    CsvBlock(CsvBlock&&) noexcept = default;
    CsvBlock& operator=(CsvBlock&&) noexcept = default;
    CsvBlock(CsvBlock const&) = delete;
    CsvBlock& operator=(CsvBlock const&) = delete;

    /// The rows, exactly as in the file.
    [[nodiscard]] std::string_view text() const noexcept { return {text_.get(), size_}; }
    /// The line number (from 1) in the file of the block's first row.
    [[nodiscard]] std::uint64_t first_line() const noexcept { return first_line_; }

    /// Every column of every row (rows with the wrong number of fields are
    /// left out under `CsvOptions::BadRows::skip`).
    /// @throws CorruptData naming the file, line and column if a row does not
    /// have the schema's fields (plus the trailing delimiter, if set; the
    /// message gives both counts) or quoting is malformed; `CsvValueError`
    /// if a value does not parse as its column's type.
    [[nodiscard]] table::Table parse() const;

    /// The columns `columns` (indices into the schema, distinct) of every row,
    /// and each row's text. Parses only those fields, but checks every row's
    /// number of fields: in a block without quotes, the fields after the last
    /// selected one are counted by their delimiters.
    /// @throws InvalidArgument if a column index is out of range or repeated.
    /// @throws CorruptData as `parse` does, for the fields it reads and every
    /// row's number of fields.
    [[nodiscard]] CsvRows parse_columns(std::span<std::size_t const> columns) const;

    /// As `parse_columns(columns)`, with each row's text rewritten so that
    /// its fields come in `field_order`: field `j` of a rewritten row is the
    /// row's field `field_order[j]`, copied as it is (quotes included),
    /// followed by the trailing delimiter if the dialect has one and the
    /// row's own line break. Lets rows of files whose columns are in
    /// different orders be written in one order.
    /// @throws InvalidArgument unless `field_order` is a permutation of the
    ///         schema's column indices; as `parse_columns` otherwise.
    [[nodiscard]] CsvRows parse_columns(std::span<std::size_t const> columns,
                                        std::span<std::size_t const> field_order) const;

  private:
    friend class CsvReader;
    friend class CsvSplits;
    CsvBlock(std::shared_ptr<detail::CsvSource const> source, std::unique_ptr<char[]> text, std::size_t size,
             std::uint64_t first_line, std::size_t line_breaks);

    /// Parses the selected columns; splits every field of a row if
    /// `all_fields` (not only those up to the last selected column), as
    /// rewriting the rows in `field_order`, unless it is empty, needs.
    [[nodiscard]] CsvRows parse_rows(std::span<std::size_t const> columns, bool all_fields,
                                     std::span<std::size_t const> field_order) const;

    std::shared_ptr<detail::CsvSource const> source_;  ///< the file's path, options and schema
    std::unique_ptr<char[]> text_;                      ///< size_ bytes of whole rows
    std::size_t size_;
    std::uint64_t first_line_;
    std::size_t line_breaks_;  ///< the `\n` in the text: at least the number of rows
};

/// Reads a CSV file block by block. Opens the file, skips a UTF-8 byte order
/// mark, reads the header if the options say there is one, and settles the schema: the one given (whose
/// names win over the header's), or one inferred from the first `infer_rows` rows (each column gets the first of
/// int64, float64, date32, a timestamp, boolean and string that holds every non-null value seen; a
/// column without any is string). A timestamp column is `timestamp_us`, or `timestamp_ns` where a fraction has more
/// than 6 digits, and `_utc` where every value names a zone (`Z` or an offset); values that mix the two, or that the
/// unit does not hold (as nanoseconds, a time after 2262), make a string. A boolean is `true` or `false`, in
/// any case (`True`, `FALSE`). A value is a number only if it spells an
/// integer exactly or is no integer at all: a column holding `042` or `-0`
/// is string, so that its keys hash as the same text does in a column of
/// strings (`table::spelled_integer`); past the rows inference looked at,
/// such a value in a column it took for numbers does not parse. Without a
/// header the columns are named `column0`, `column1`, ...
///
/// Memory: the reader holds one buffer of `chunk_bytes + 1` bytes, and each
/// block it hands out owns one of the same size.
///
/// Thread safety: externally synchronized; the blocks it returns are not tied
/// to it and may outlive it. Neither copyable nor movable (it owns an open
/// file); hold it in a `std::unique_ptr` to move it.
class CsvReader {
  public:
    /// Opens `path` with `options` and `schema` (inferred if not given).
    /// `inferred` marks the columns of a given `schema` whose types were
    /// inferred all the same (from another file's rows, say): as in the
    /// columns this reader infers, their integers and doubles must not spell
    /// an integer other than exactly (`042`, `-0`), which inference would
    /// have taken for text, and parsing refuses them. Empty: none was; a
    /// column of a given type reads `042` as 42.
    /// @throws InvalidArgument if the options are invalid, or `inferred` is
    ///         neither empty nor of the schema's size.
    /// @throws IoError naming the path if it cannot be opened or read.
    /// @throws CorruptData naming the file and line if the header does not
    /// match a given schema or the quoting of the rows used for inference is
    /// malformed (rows with the wrong number of fields are passed over there;
    /// parsing reports them), if the header line is empty, if two of its
    /// names are equal (when the schema is inferred), or if the file is
    /// not text: gzip, zstd, bzip2, xz or zip compressed, Parquet or Arrow
    /// IPC (by the bytes it starts with).
    CsvReader(std::filesystem::path path, CsvOptions options, std::optional<table::Schema> schema = std::nullopt,
              std::vector<bool> inferred = {});
    CsvReader(CsvReader const&) = delete;
    CsvReader& operator=(CsvReader const&) = delete;
    ~CsvReader();

    /// The columns of the file; empty for an empty file (or one of only a
    /// byte order mark) without a given schema.
    [[nodiscard]] table::Schema const& schema() const noexcept;

    /// The rows the column types were inferred from: `infer_rows`, or all
    /// the file has where that is fewer, or those before a row longer than
    /// `chunk_bytes` (which reading then reports), or those of the first
    /// chunk where the file cannot be read twice (a pipe); 0 with a schema
    /// given.
    [[nodiscard]] std::size_t inferred_rows() const noexcept;

    /// The header row exactly as it is in the file (a byte order mark left
    /// out), line break included; empty if the options say there is none or
    /// the file is empty.
    [[nodiscard]] std::string const& header_line() const noexcept;

    /// The next block of whole rows, or nothing at the end of the file.
    /// @throws IoError naming the path if reading fails.
    /// @throws CorruptData naming the file and line if no row ends within
    /// `chunk_bytes` (an unclosed quote, or a row longer than the chunk).
    [[nodiscard]] std::optional<CsvBlock> read_block();

    /// The next block parsed (`read_block()->parse()`), or nothing at the end.
    /// @throws as `read_block` and `CsvBlock::parse` do.
    [[nodiscard]] std::optional<table::Table> read();

  private:
    /// Reads from the file after the bytes already pending until `chunk_bytes`
    /// are pending or the file ends; at the end, adds a missing final `\n`.
    void fill();
    /// Drops the first `bytes` pending bytes and reads on after the rest.
    /// Requires: `bytes <= pending_size_`.
    void drop_pending(std::size_t bytes);
    /// Drops a UTF-8 byte order mark at the start of the file.
    /// @throws CorruptData if the file starts as a compressed stream, a
    ///         Parquet file or Arrow IPC data does.
    void check_start_of_file();
    /// The bytes up to the end of the last whole row pending.
    /// @throws CorruptData if there is none.
    [[nodiscard]] std::size_t complete_rows() const;
    /// The columns of `names` (or, if empty, of the first row) typed by the
    /// first `infer_rows` rows, read through the reader's own buffer, which
    /// then holds the first rows again.
    /// @throws as the constructor.
    [[nodiscard]] table::Schema infer_schema(std::vector<std::string> names);

    std::string path_;
    CsvOptions options_;
    std::string header_line_;
    std::shared_ptr<detail::CsvSource const> source_;  ///< set once the schema is known
    FileDescriptor descriptor_;
    bool end_of_file_ = false;
    bool added_line_break_ = false;  ///< `fill` ended the file's last row, which had no line break
    std::unique_ptr<char[]> pending_;  ///< chunk_bytes + 1 bytes: read but not yet handed out
    std::size_t pending_size_ = 0;
    std::uint64_t next_line_ = 1;  ///< the line number of the first pending byte
    std::size_t inferred_rows_ = 0;
};

}  // namespace spillway::io
