#pragma once
/// @file
/// Tables read from and written to files of any `FileFormat`, one table of
/// rows at a time, so that a file larger than memory streams through.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <spillway/io/file_format.hpp>
#include <spillway/io/csv_options.hpp>
#include <spillway/table/schema.hpp>
#include <spillway/table/table.hpp>

namespace spillway::io {

/// The most rows one read of a Parquet file or an Arrow stream returns: a
/// row group or a record batch is read in parts of this many rows, so that
/// its size does not bound memory.
inline constexpr std::uint64_t rows_per_read = std::uint64_t{1} << 16;

/// Reads a file as a sequence of tables, in file order.
///
/// What one `read` returns: a CSV block (`CsvOptions::chunk_bytes` of text),
/// up to 65,536 rows of a Parquet row group (a row group is decoded in such
/// batches, page by page, so a large one does not bound memory), or an Arrow
/// IPC record batch. Arrow IPC input may be a file (Feather version 2) or a
/// stream, told by its first bytes; Arrow IPC output is a file.
///
/// Column types: spillway's types are read as they are. Parquet and Arrow
/// columns of a narrower integer type (int8, int16, uint8, uint16) are read
/// as int32, uint32 and uint64 as int64, float16 and float32 as float64,
/// decimals of any precision as float64 (each value the double nearest it),
/// date64 as date32, timestamps in seconds as
/// milliseconds, a timestamp of any time zone as UTC, legacy INT96
/// timestamps in microseconds, large or view strings and dictionary-encoded
/// strings as strings, and a column of Arrow's null type (nulls only, of no
/// type) as strings, all null. Any other type is refused when
/// the file is opened, naming the column and its type. A value its type
/// cannot hold is `InvalidArgument` when its batch is read, naming the
/// column and the value: a uint64 beyond int64, a decimal of more than 15
/// significant digits (which no double brings back exactly), a date64
/// within a day.
///
/// Thread safety: externally synchronized. The tables it returns are
/// independent of it.
class TableFileReader {
  public:
    virtual ~TableFileReader() = default;

    /// The columns of the file, as spillway reads them.
    [[nodiscard]] virtual table::Schema const& schema() const noexcept = 0;

    /// The next table of rows, or nothing after the last.
    /// @throws IoError naming the file if reading fails.
    /// @throws CorruptData naming the file if its data is malformed.
    /// @throws InvalidArgument naming the file, the column and the value if
    ///         a value cannot be held by the type it is read as.
    [[nodiscard]] virtual std::optional<table::Table> read() = 0;

    /// The rows of the file, if it records them (Parquet and Arrow IPC files
    /// do, Arrow IPC streams and CSV do not).
    [[nodiscard]] virtual std::optional<std::uint64_t> rows() const noexcept = 0;

    /// The most bytes of column data one `read` returns, as far as can be
    /// told before reading on: a CSV block's size; for Parquet, the larger of
    /// the uncompressed size (by the footer) of the most any 65,536 rows read
    /// in a row can take, and the first read's size (read when the file is
    /// opened) plus a quarter; 0 for Arrow IPC, which does not say.
    /// A Parquet read holds up to 65,536 rows, of one row group or of
    /// several small ones; putting those together, it holds them twice for
    /// a moment.
    [[nodiscard]] virtual std::uint64_t largest_read_bytes() const noexcept = 0;

    /// How many tables `read` returns, where the file says before it is
    /// read: an Arrow IPC file's record batches, by its footer; nothing for
    /// the other formats and for Arrow IPC streams.
    [[nodiscard]] virtual std::optional<std::uint64_t> reads() const noexcept { return std::nullopt; }

    /// What the reader itself holds while it reads, besides the tables it
    /// returns: for Parquet, the pages, dictionaries and buffers of its
    /// column readers, measured by the Arrow library's allocations across
    /// the first read (when the file is opened; an allocation another
    /// thread makes meanwhile counts too); 0 for the other formats.
    [[nodiscard]] virtual std::uint64_t held_bytes() const noexcept { return 0; }
};

/// Opens `path`, a file of `format`, for reading. CSV files are read with
/// `csv` and `schema` (inferred if not given; see `io::CsvReader`).
/// @throws IoError naming the path if it cannot be opened.
/// @throws CorruptData naming the path if it is not a file of `format`.
/// @throws InvalidArgument naming the column if a column's type cannot be
///         read (see `TableFileReader`).
[[nodiscard]] std::unique_ptr<TableFileReader> open_table_file(std::filesystem::path const& path, FileFormat format,
                                                               io::CsvOptions const& csv = {},
                                                               std::optional<table::Schema> schema = std::nullopt);

/// How a `TableFileWriter` lays out its file.
struct WriteOptions {
    /// The dialect of CSV files; with `header`, the schema's names are written first.
    io::CsvOptions csv;
    /// The compression of Parquet column chunks and of Arrow IPC record
    /// batch bodies: `none`, `zstd` or `lz4`; Parquet also takes `snappy`
    /// and `gzip`.
    std::string compression = "zstd";
    /// The codec's level, within the range the Arrow library gives it (with
    /// zstd 1.5, -131072 to 22; gzip 1 to 9); nothing for the codec's own
    /// default. `none` and `snappy` take no level.
    std::optional<int> compression_level;
    /// Parquet: the most rows one row group holds, at least 1.
    std::uint64_t row_group_rows = std::uint64_t{1} << 20;
    /// Parquet: the writer holds the tables written until one more would
    /// take their column data past this many bytes (or they reach
    /// `row_group_rows` rows), then writes them out as a row group, one
    /// column chunk after another; each column's data pages and dictionary
    /// are limited to a quarter of this divided among the columns (8 KiB to
    /// 1 MiB).
    std::uint64_t row_group_bytes = std::uint64_t{64} << 20;
    /// Parquet: whether column chunks carry min/max statistics.
    bool statistics = true;
};

/// Writes tables of one schema to a file of one format. Parquet files get
/// row groups of at most `row_group_rows` rows (fewer once
/// `row_group_bytes` is reached), with statistics, in the compression asked
/// for, each column dictionary encoded unless its values keep coming new in
/// the first rows written (keys, prices, free text): the writer holds the
/// tables written (sharing their buffers) until a row group's worth has
/// come; Arrow IPC files one record batch per `write`; CSV the rows as
/// `io::append_csv_rows` formats them. Once a `write` or `close` has
/// failed with `IoError`, the file is incomplete: every later `write` and
/// `close` throws `IoError` saying so (`close` still closes the file), and
/// the caller removes the file. A Parquet or Arrow IPC writer is left so by
/// any other failure too, but for the `InvalidArgument` of a table of other
/// columns, of a closed writer or of a string that is not UTF-8.
///
/// Thread safety: externally synchronized.
class TableFileWriter {
  public:
    virtual ~TableFileWriter() = default;

    /// Appends the rows of `table`, whose schema is the writer's.
    /// @throws InvalidArgument if the schema differs or the writer is closed,
    ///         or, for Parquet and Arrow IPC, whose strings are UTF-8, if a
    ///         string is not (naming its column and row); the writer is left
    ///         as it was.
    /// @throws IoError naming the file if writing fails, or failed before.
    virtual void write(table::Table table) = 0;

    /// Finishes the file (a Parquet or Arrow footer) and closes it; does
    /// nothing once it has succeeded.
    /// @throws IoError naming the file if writing or closing fails, or
    ///         writing failed before.
    virtual void close() = 0;

    /// The bytes written to the file so far.
    [[nodiscard]] virtual std::uint64_t bytes_written() const noexcept = 0;

    /// CSV: the bytes of the longest row written (`CsvWriter::longest_row_bytes`),
    /// which a block reading the file back must hold. 0 for Parquet and
    /// Arrow IPC, which are not read in blocks of bytes.
    [[nodiscard]] virtual std::size_t longest_row_bytes() const noexcept { return 0; }
};

/// What a writer of `format` holds in memory for a file of `schema` all
/// the time, besides the tables it holds: for Parquet, 4 KiB per column
/// and 192 KiB besides (the library's writer and the file's metadata);
/// nothing for Arrow IPC and CSV.
[[nodiscard]] std::uint64_t writer_overhead_bytes(FileFormat format, table::Schema const& schema) noexcept;

/// What a writer of `format` takes while it writes out the tables it holds,
/// besides them, with row groups of `row_group_bytes`: for Parquet, the
/// tables put together into one (as large as they are), one column chunk's
/// encoded pages (at most `row_group_bytes`), a data page and a dictionary
/// (at most 1 MiB each) and the codec's state (1 MiB); nothing for Arrow
/// IPC and CSV, which write each table as it comes.
[[nodiscard]] std::uint64_t writer_flush_bytes(FileFormat format, std::uint64_t row_group_bytes) noexcept;

/// Checks `options.compression` and its level for files of `format`, as
/// `create_table_file` does, without making a file. CSV files are never
/// compressed, and take any.
/// @throws InvalidArgument naming the codecs the format takes, or the levels
///         the codec takes.
void check_compression(FileFormat format, WriteOptions const& options);

/// Creates (or truncates) `path` as a file of `format` for tables of
/// `schema`, laid out as `options` say.
/// @throws IoError naming the path if it cannot be created.
/// @throws InvalidArgument if an option is not valid for the format, or (for
///         Parquet and Arrow IPC) a column name is not UTF-8, before `path`
///         is touched.
[[nodiscard]] std::unique_ptr<TableFileWriter> create_table_file(std::filesystem::path const& path, FileFormat format,
                                                                 table::Schema const& schema,
                                                                 WriteOptions const& options = {});

}  // namespace spillway::io
