#pragma once
/// @file
/// Writes tables as CSV.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <spillway/core/file_descriptor.hpp>
#include <spillway/io/csv_options.hpp>
#include <spillway/table/table.hpp>

namespace spillway::io {

/// Appends the rows of `table` to `out` as CSV text in the dialect of
/// `options` (the header is not written; see `append_csv_header`). Each row
/// ends with `\n`. Integers and dates (`YYYY-MM-DD`) are written exactly,
/// doubles in the shortest form that reads back to the same value, nulls as
/// empty fields. A string is quoted when it is empty, holds the delimiter,
/// the quote or a line break, or, with a quote character, begins as a byte
/// order mark or a compressed or binary file does (which `CsvReader` drops
/// or refuses at a file's start; without quoting, as in `.tbl`, it is
/// written as it is, and a file it begins does not read back); quotes
/// inside are doubled. What `CsvReader`
/// reads back equals the table, except that without quoting an empty string
/// reads back as null. Returns the bytes of the longest row appended, its
/// line break included (0 for a table without rows).
/// @throws InvalidArgument if a string needs quoting but `options.quote` is
/// unset; nothing is appended then.
std::size_t append_csv_rows(table::Table const& table, CsvOptions const& options, std::string& out);

/// Appends the header row of `schema` (its column names) to `out`; returns
/// its bytes, line break included.
/// @throws InvalidArgument as `append_csv_rows` does for a name.
std::size_t append_csv_header(table::Schema const& schema, CsvOptions const& options, std::string& out);

/// Writes CSV to a file through a buffer (1 MiB unless told otherwise): the
/// header (if the options say so) when opened, then tables or rows already
/// formatted. Rows already formatted never grow the buffer past its size: a
/// run of rows at least that large is written straight from the caller's
/// memory. Once writing or closing the file has failed, the file is
/// incomplete: every later `write`, `write_rows` and `close` throws
/// `IoError` saying so (`close` still closes it).
///
/// Thread safety: externally synchronized. Neither copyable nor movable (it
/// owns an open file); hold it in a `std::unique_ptr` to move it.
class CsvWriter {
  public:
    /// The size of the buffer unless the constructor is told otherwise.
    static constexpr std::size_t default_buffer_bytes = std::size_t{1} << 20;

    /// Creates or truncates `path` and, if `options.header`, writes the
    /// header of `schema`. Buffers up to `buffer_bytes` before writing.
    /// @throws IoError naming the path if it cannot be created.
    /// @throws InvalidArgument if the options are invalid, `buffer_bytes` is
    ///         0, or a column name needs quoting and `options.quote` is unset;
    ///         before `path` is touched.
    CsvWriter(std::filesystem::path path, CsvOptions options, table::Schema const& schema,
              std::size_t buffer_bytes = default_buffer_bytes);
    CsvWriter(CsvWriter const&) = delete;
    CsvWriter& operator=(CsvWriter const&) = delete;
    /// Closes the file if `close` was not called; errors are then lost, so
    /// call `close` to see them.
    ~CsvWriter();

    /// Writes the rows of `table`.
    /// @throws InvalidArgument as `append_csv_rows` does, or if the writer is closed.
    /// @throws IoError naming the path if writing fails, or failed before.
    void write(table::Table const& table);

    /// Writes `rows`, whole rows already in this file's dialect, verbatim
    /// (rows copied from a `CsvBlock`, say); but for the first field of a
    /// file without a header, which is quoted (where the dialect quotes) if
    /// it begins as a byte order mark or a binary file does (`append_csv_rows`).
    /// @throws InvalidArgument if the writer is closed.
    /// @throws IoError naming the path if writing fails, or failed before.
    void write_rows(std::string_view rows);

    /// Writes what is buffered and closes the file; does nothing once closed.
    /// @throws IoError naming the path if writing or closing fails, or
    ///         writing failed before.
    void close();

    /// The bytes written so far, header included, buffered ones too.
    [[nodiscard]] std::uint64_t bytes_written() const noexcept { return bytes_written_; }

    /// The bytes of the longest row `write` wrote, or of the header if it is
    /// longer, line break included: the block a reader needs to read the
    /// file back (`CsvOptions::chunk_bytes`). Rows given to `write_rows`
    /// count only where the writer lengthens one (a first field quoted at the
    /// file's start): the others come from blocks that held them.
    [[nodiscard]] std::size_t longest_row_bytes() const noexcept { return longest_row_bytes_; }

  private:
    /// Writes `rows` through the buffer, or straight from the caller's
    /// memory if they are at least its size.
    void append_rows(std::string_view rows);
    /// Writes the buffer to the file and empties it.
    void flush();
    /// Writes `bytes` to the file.
    /// @throws IoError, marking the writer failed, if the file refuses them.
    void write_all(std::string_view bytes);
    /// @throws IoError if a write failed before.
    void check_not_failed() const;

    std::string path_;
    CsvOptions options_;
    std::size_t buffer_bytes_;  ///< flush once the buffer holds this many bytes
    FileDescriptor descriptor_;  ///< none once closed
    std::string buffer_;   ///< formatted bytes not yet written
    std::uint64_t bytes_written_ = 0;
    std::size_t longest_row_bytes_ = 0;
    bool failed_ = false;  ///< writing or closing the file failed: what it holds is incomplete
};

}  // namespace spillway::io
