#include <arrow/io/file.h>
#include <arrow/memory_pool.h>
#include <arrow/record_batch.h>
#include <arrow/table.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/properties.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/io/parquet_row_groups.hpp>
#include <spillway/table/row_hash.hpp>

#include "arrow_memory.hpp"
#include "arrow_output_file.hpp"
#include "arrow_tables.hpp"
#include "compression.hpp"
#include "formats.hpp"

namespace spillway::io::detail {
namespace {

/// Runs `action`, turning the exceptions the Parquet library throws into
/// `CorruptData` naming `what`.
template <typename Action>
auto guarded(std::string const& what, Action&& action) {
    try {
        return action();
    } catch (parquet::ParquetException const& error) {
        SPILLWAY_FAIL(what << ": " << error.what(), CorruptData);
    }
}

/// What a reader reads of a column chunk at a time: without a bound, the
/// library reads each column chunk of a row group whole.
constexpr std::uint64_t read_buffer_bytes = std::uint64_t{256} << 10;

/// Row groups 0 to `count - 1`.
std::vector<std::size_t> all_groups(int count) {
    std::vector<std::size_t> groups(static_cast<std::size_t>(count));
    std::iota(groups.begin(), groups.end(), std::size_t{0});
    return groups;
}

/// The most bytes of column data one read of row groups `order` (in that
/// order) of `footer` can hold, as the footer tells, taking each row group's
/// uncompressed size as spread evenly over its rows. A read is at most
/// `rows_per_read` consecutive rows, and starts where a row group starts or
/// at a multiple of `rows_per_read` rows: the library's batches run across
/// row groups in steps of that many rows, but for columns read as
/// dictionaries, whose batches also end with each row group, and which
/// `ParquetFileReader` puts together.
std::uint64_t largest_read_in_footer(parquet::FileMetaData const& footer, std::span<std::size_t const> order) {
    std::vector<std::uint64_t> ends;     // the rows read by the end of each row group with rows
    std::vector<double> bytes_before;    // the bytes of the row groups before it
    std::vector<double> bytes_per_row;
    double total_bytes = 0;
    for (auto const index : order) {
        auto const group = footer.RowGroup(static_cast<int>(index));
        auto const rows = static_cast<std::uint64_t>(std::max<std::int64_t>(group->num_rows(), 0));
        if (rows == 0) {
            continue;  // nothing of it is read
        }
        auto const bytes = static_cast<double>(std::max<std::int64_t>(group->total_byte_size(), 0));
        ends.push_back((ends.empty() ? 0 : ends.back()) + rows);
        bytes_before.push_back(total_bytes);
        bytes_per_row.push_back(bytes / static_cast<double>(rows));
        total_bytes += bytes;
    }
    auto const total_rows = ends.empty() ? 0 : ends.back();
    // The bytes of the rows before row `row`.
    auto const bytes_up_to = [&](std::uint64_t row) {
        auto const group = static_cast<std::size_t>(std::ranges::upper_bound(ends, row) - ends.begin());
        if (group == ends.size()) {
            return total_bytes;
        }
        auto const start = group == 0 ? 0 : ends[group - 1];
        return bytes_before[group] + static_cast<double>(row - start) * bytes_per_row[group];
    };
    double largest = 0;
    auto const read_from = [&](std::uint64_t first) {
        largest = std::max(largest, bytes_up_to(std::min(first + rows_per_read, total_rows)) - bytes_up_to(first));
    };
    for (std::size_t group = 0; group < ends.size(); ++group) {
        read_from(group == 0 ? 0 : ends[group - 1]);
    }
    for (std::uint64_t first = rows_per_read; first < total_rows; first += rows_per_read) {
        read_from(first);
    }
    return static_cast<std::uint64_t>(std::ceil(largest));
}

/// Whether every data page of column `column` in row groups `groups` of
/// `footer` is dictionary encoded, as far as the footer's page statistics say.
bool wholly_dictionary_encoded(parquet::FileMetaData const& footer, std::span<int const> groups, int column) {
    auto const dictionary_page = [](parquet::PageEncodingStats const& pages) {
        bool const data = pages.page_type == parquet::PageType::DATA_PAGE
                       || pages.page_type == parquet::PageType::DATA_PAGE_V2;
        return !data || pages.encoding == parquet::Encoding::RLE_DICTIONARY
            || pages.encoding == parquet::Encoding::PLAIN_DICTIONARY;
    };
    return std::all_of(groups.begin(), groups.end(), [&](int group) {
        auto const chunk = footer.RowGroup(group)->ColumnChunk(column);
        auto const& pages = chunk->encoding_stats();
        return !pages.empty() && std::all_of(pages.begin(), pages.end(), dictionary_page);
    });
}

/// A reader of row groups `groups` (all if empty) of the Parquet file `path`
/// that decodes each column's pages as a batch of at most `rows_per_read`
/// rows needs them, from `arrow_memory_pool`. String columns whose pages
/// there are all dictionary encoded are read as dictionaries, whose values
/// are decoded in one pass (`to_table`) rather than each appended to a
/// string builder.
std::unique_ptr<parquet::arrow::FileReader> open_reader(
    std::string const& path, std::vector<int> groups = {}, std::shared_ptr<parquet::FileMetaData> footer = nullptr
) {
    auto const file = value_of(arrow::io::ReadableFile::Open(path, arrow_memory_pool()),
                               "cannot open Parquet file '" + path + "'");
    auto const what = "'" + path + "' is not a readable Parquet file";
    parquet::ArrowReaderProperties properties;
    properties.set_batch_size(static_cast<std::int64_t>(rows_per_read));
    properties.set_pre_buffer(false);
    // Legacy INT96 timestamps in microseconds: in nanoseconds, Arrow's
    // default, a date before 1677 or after 2262 wraps around silently.
    properties.set_coerce_int96_timestamp_unit(arrow::TimeUnit::MICRO);
    parquet::arrow::FileReaderBuilder builder;
    return guarded(what, [&] {
        parquet::ReaderProperties reader_properties(arrow_memory_pool());
        reader_properties.enable_buffered_stream();
        reader_properties.set_buffer_size(static_cast<std::int64_t>(read_buffer_bytes));
        check_decoded(builder.Open(file, reader_properties, std::move(footer)), what);
        auto const& metadata = *builder.raw_reader()->metadata();
        if (groups.empty()) {
            groups.resize(static_cast<std::size_t>(metadata.num_row_groups()));
            std::iota(groups.begin(), groups.end(), 0);
        }
        for (int column = 0; column < metadata.num_columns(); ++column) {
            auto const logical = metadata.schema()->Column(column)->logical_type();
            if (logical != nullptr && logical->is_string() && !groups.empty()
                && wholly_dictionary_encoded(metadata, groups, column)) {
                properties.set_read_dictionary(column, true);
            }
        }
        return value_of(builder.memory_pool(arrow_memory_pool())->properties(properties)->Build(), what);
    });
}

/// Reads a Parquet file in batches of at most `rows_per_read` rows, decoding
/// each column's pages as the batch needs them, from `arrow_memory_pool`.
class ParquetFileReader final : public TableFileReader {
  public:
    /// Reads the whole file, or only row groups `groups` in that order; with
    /// `footer`, the file's footer as read before.
    explicit ParquetFileReader(std::filesystem::path const& path,
                               std::optional<std::vector<std::size_t>> const& groups = std::nullopt,
                               std::shared_ptr<parquet::FileMetaData> footer = nullptr)
        : path_(path.string()) {
        auto const allocated_before = arrow_memory_pool()->bytes_allocated();
        reader_ = open_reader(
            path_, groups ? std::vector<int>(groups->begin(), groups->end()) : std::vector<int>{}, std::move(footer)
        );
        auto const what = "'" + path_ + "' is not a readable Parquet file";
        std::shared_ptr<arrow::Schema> schema;
        check(reader_->GetSchema(&schema), "cannot read the schema of '" + path_ + "'");
        schema_ = to_spillway(*schema, path_);
        auto const metadata = reader_->parquet_reader()->metadata();
        auto const order = groups ? *groups : all_groups(metadata->num_row_groups());
        largest_ = largest_read_in_footer(*metadata, order);
        for (int column = 0; column < metadata->num_columns(); ++column) {
            batches_end_at_groups_ = batches_end_at_groups_ || reader_->properties().read_dictionary(column);
        }
        std::uint64_t group_end = 0;
        for (auto const group : order) {
            group_end += static_cast<std::uint64_t>(metadata->RowGroup(static_cast<int>(group))->num_rows());
            group_ends_.push_back(group_end);
        }
        rows_ = group_end;
        batches_ = guarded(what, [&] {
            if (!groups) {
                return value_of(reader_->GetRecordBatchReader(), what);
            }
            return value_of(reader_->GetRecordBatchReader(std::vector<int>(groups->begin(), groups->end())), what);
        });
        // The footer gives encoded sizes (dictionaries, run lengths), which
        // decoded strings can exceed severalfold: the first batch, read now,
        // is measured too, with a quarter more for batches of longer rows.
        first_ = read_next();
        held_ = static_cast<std::uint64_t>(
            std::max<std::int64_t>(arrow_memory_pool()->bytes_allocated() - allocated_before, 0)
        );
        if (first_) {
            largest_ = std::max<std::uint64_t>(largest_, first_->byte_size() + first_->byte_size() / 4);
        }
    }

    [[nodiscard]] table::Schema const& schema() const noexcept override { return schema_; }

    [[nodiscard]] std::optional<table::Table> read() override {
        if (first_) {
            return std::exchange(first_, std::nullopt);
        }
        return read_next();
    }

    [[nodiscard]] std::uint64_t largest_read_bytes() const noexcept override { return largest_; }

    [[nodiscard]] std::uint64_t held_bytes() const noexcept override { return held_; }

    [[nodiscard]] std::optional<std::uint64_t> rows() const noexcept override { return rows_; }

  private:
    /// The next read: the library's next batch, and while they fit in
    /// `rows_per_read` rows, the batches after it, copied into one table
    /// (so that for a moment the batches and the table are held together).
    /// Nothing at the end.
    [[nodiscard]] std::optional<table::Table> read_next() {
        std::vector<table::Table> tables;
        std::uint64_t rows = 0;
        while (auto batch = next_batch()) {
            rows += batch->num_rows();
            tables.push_back(std::move(*batch));
            if (rows + next_batch_rows() > rows_per_read) {
                break;
            }
        }
        if (tables.size() <= 1) {
            return tables.empty() ? std::nullopt : std::optional<table::Table>(std::move(tables.front()));
        }
        return table::Table::concatenate(tables);
    }

    /// The library's next batch, or nothing at the end.
    [[nodiscard]] std::optional<table::Table> next_batch() {
        auto const what = "cannot read '" + path_ + "'";
        std::shared_ptr<arrow::RecordBatch> batch;
        guarded(what, [&] { check_decoded(batches_->ReadNext(&batch), what); });
        if (batch == nullptr) {
            return std::nullopt;
        }
        rows_read_ += static_cast<std::uint64_t>(batch->num_rows());
        return to_table(*batch, path_);
    }

    /// The most rows the library's next batch may hold; 0 after the last.
    /// Its batches run across row groups in steps of `rows_per_read` rows,
    /// unless a column is read as dictionaries: those differ by row group,
    /// so each batch then also ends with its row group, and a file of small
    /// row groups would be read in tables of a few rows each.
    [[nodiscard]] std::uint64_t next_batch_rows() const noexcept {
        if (!batches_end_at_groups_) {
            return rows_per_read;
        }
        auto const group_end = std::ranges::upper_bound(group_ends_, rows_read_);
        return group_end == group_ends_.end() ? 0 : std::min(rows_per_read, *group_end - rows_read_);
    }

    std::string path_;
    std::unique_ptr<parquet::arrow::FileReader> reader_;
    std::unique_ptr<arrow::RecordBatchReader> batches_;
    table::Schema schema_;
    std::uint64_t largest_ = 0;
    std::uint64_t held_ = 0;  ///< see `held_bytes`
    std::uint64_t rows_ = 0;  ///< of the row groups read
    bool batches_end_at_groups_ = false;  ///< see `next_batch_rows`
    std::vector<std::uint64_t> group_ends_;  ///< the rows read at the end of each row group, in read order
    std::uint64_t rows_read_ = 0;            ///< the rows of the library's batches so far
    std::optional<table::Table> first_;  ///< the first batch, read to measure it, until `read` returns it
};

/// The bounds of a column writer's data page and dictionary sizes.
constexpr std::uint64_t min_page_bytes = std::uint64_t{8} << 10;
constexpr std::uint64_t max_page_bytes = std::uint64_t{1} << 20;  // the library's default

/// The contiguous rows `keeps_coming_new` looks at, and the least it needs.
constexpr std::size_t distinct_sample_rows = 4096;
constexpr std::size_t min_distinct_sample_rows = 1024;

/// The number of distinct values among the first `half` of `hashes`, and
/// among all of them: one pass through an open-addressing set.
std::pair<std::size_t, std::size_t> distinct_values(std::span<std::uint64_t const> hashes, std::size_t half) {
    auto const mask = std::bit_ceil(2 * hashes.size()) - 1;
    std::vector<std::uint64_t> seen(mask + 1, 0);  // 0: an empty slot; the hash 0 is counted on its own
    bool seen_zero = false;
    std::size_t in_half = 0;
    std::size_t distinct = 0;
    for (std::size_t row = 0; row < hashes.size(); ++row) {
        if (row == half) {
            in_half = distinct;
        }
        auto const hash = hashes[row];
        if (hash == 0) {
            distinct += seen_zero ? 0 : 1;
            seen_zero = true;
            continue;
        }
        auto slot = hash & mask;
        while (seen[slot] != 0 && seen[slot] != hash) {
            slot = (slot + 1) & mask;
        }
        distinct += seen[slot] == 0 ? 1 : 0;
        seen[slot] = hash;
    }
    return {in_half, distinct};
}

/// Whether the values of column `index` keep coming new, judged by the
/// rows of `sample` (the first rows of a file, at most `distinct_sample_rows`):
/// twice the rows hold at least 1.8 times the distinct values, as for keys,
/// prices and free text, not for dates or codes. A dictionary of such a
/// column keeps growing with the row group, and saves little against plain
/// pages and the codec, or outgrows its page, and the library then falls back
/// to plain pages, having built the dictionary for nothing. False with too
/// few rows to tell.
bool keeps_coming_new(table::Table const& sample, std::size_t index) {
    auto const rows = sample.num_rows();
    if (rows < min_distinct_sample_rows) {
        return false;
    }
    std::size_t const column[] = {index};
    auto const [in_half, in_all] = distinct_values(table::hash_rows(sample, column), rows / 2);
    return 10 * in_all >= 18 * in_half;
}

/// Writes a Parquet file, holding the tables written until one more would
/// take them past `row_group_bytes` bytes of column data, or they reach
/// `row_group_rows` rows, and then writing them out, put together into one
/// table, as a row group, one column chunk after another: only a writer
/// that writes out has a column writer's pages. Columns are dictionary encoded,
/// but for those whose first rows keep coming with new values
/// (`keeps_coming_new`): the library's writer is opened with the first row
/// group, to look at its rows (the first table written may be a few rows).
class ParquetFileWriter final : public TableFileWriter {
  public:
    /// Requires: `options` as `create_parquet_file` checks them; `codec` is
    /// `compression_of(options, true)`.
    ParquetFileWriter(std::filesystem::path const& path, table::Schema schema, WriteOptions const& options,
                      arrow::Compression::type codec)
        : file_(path, "cannot create Parquet file '" + path.string() + "'"),
          schema_(std::move(schema)),
          arrow_schema_(to_arrow(schema_)),
          row_group_bytes_(options.row_group_bytes),
          row_group_rows_(options.row_group_rows) {
        properties_.compression(codec);
        if (options.compression_level) {
            properties_.compression_level(*options.compression_level);
        }
        properties_.max_row_group_length(static_cast<std::int64_t>(row_group_rows_));
        // Each column's writer buffers a data page and a dictionary of up to
        // these sizes besides the row group's encoded pages: a share of the
        // row group's budget, so that many open files stay within theirs.
        auto const page_bytes = static_cast<std::int64_t>(std::clamp<std::uint64_t>(
            options.row_group_bytes / (4 * std::max<std::size_t>(schema_.size(), 1)), min_page_bytes, max_page_bytes));
        properties_.data_pagesize(page_bytes);
        properties_.memory_pool(arrow_memory_pool());
        properties_.dictionary_pagesize_limit(page_bytes);
        if (options.statistics) {
            properties_.enable_statistics();
        } else {
            properties_.disable_statistics();
        }
    }

    void write(table::Table table) override {
        check_writable(table, schema_, file_.closed(), file_.path());
        check_utf8(table, file_.path());
        file_.write([&] {
            auto const bytes = table.byte_size();
            if (!held_.empty() && held_bytes_ + bytes > row_group_bytes_) {
                write_held();
            }
            held_bytes_ += bytes;
            held_rows_ += table.num_rows();
            held_.push_back(std::move(table));
            if (held_rows_ >= row_group_rows_) {
                write_held();
            }
        });
    }

    void close() override {
        file_.close([&](std::string const& what) {
            write_held();
            if (writer_ == nullptr) {
                open(nullptr);
            }
            guarded(what, [&] {
                check(writer_->Close(), what);
            });
        });
    }

    [[nodiscard]] std::uint64_t bytes_written() const noexcept override { return file_.bytes_written(); }

  private:
    /// Writes the held tables out as row groups of at most `row_group_rows_`
    /// rows, one column chunk after another, opening the library's writer
    /// with the first.
    void write_held() {
        if (held_.empty()) {
            return;
        }
        auto const what = "cannot write to '" + file_.path().string() + "'";
        guarded(what, [&] {
            // One table, handed over once: the library then writes each
            // column as one array, not as a chunk for every table held.
            auto rows = held_.size() == 1 ? std::move(held_.front()) : table::Table::concatenate(held_);
            held_.clear();
            held_bytes_ = 0;
            held_rows_ = 0;
            if (writer_ == nullptr) {
                open(&rows);
            }
            auto const table = value_of(
                arrow::Table::FromRecordBatches(arrow_schema_, {to_record_batch(std::move(rows), arrow_schema_)}), what
            );
            check(writer_->WriteTable(*table, static_cast<std::int64_t>(row_group_rows_)), what);
        });
    }

    /// Opens the library's writer, choosing the columns to encode without a
    /// dictionary by the rows of `first` (all with one if null).
    void open(table::Table const* first) {
        if (first != nullptr) {
            auto const sample = first->slice(0, std::min(first->num_rows(), distinct_sample_rows));
            for (std::size_t index = 0; index < schema_.size(); ++index) {
                if (keeps_coming_new(sample, index)) {
                    properties_.disable_dictionary(schema_.field(index).name);
                }
            }
        }
        auto const what = "cannot create Parquet file '" + file_.path().string() + "'";
        writer_ = guarded(what, [&] {
            return value_of(parquet::arrow::FileWriter::Open(*arrow_schema_, arrow_memory_pool(),
                                                             file_.stream(), properties_.build()),
                            what);
        });
    }

    ArrowOutputFile file_;
    table::Schema schema_;
    std::shared_ptr<arrow::Schema> arrow_schema_;  ///< `schema_`'s, made once for every table written
    std::uint64_t row_group_bytes_;
    std::uint64_t row_group_rows_;
    parquet::WriterProperties::Builder properties_;  ///< what `open` opens the library's writer with
    std::unique_ptr<parquet::arrow::FileWriter> writer_;  ///< opened with the first row group, or by `close`
    std::vector<table::Table> held_;  ///< the rows of the next row group
    std::uint64_t held_bytes_ = 0;  ///< of `held_`'s tables
    std::uint64_t held_rows_ = 0;
};

}  // namespace

std::unique_ptr<TableFileReader> open_parquet_file(std::filesystem::path const& path) {
    return std::make_unique<ParquetFileReader>(path);
}

std::unique_ptr<TableFileWriter> create_parquet_file(std::filesystem::path const& path, table::Schema const& schema,
                                                     WriteOptions const& options) {
    auto const codec = compression_of(options, true);
    auto const most_rows = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    SPILLWAY_EXPECTS(options.row_group_rows > 0 && options.row_group_rows <= most_rows,
                     "row_group_rows is " << options.row_group_rows << "; a Parquet row group holds 1 to " << most_rows
                                          << " rows",
                     InvalidArgument);
    check_utf8_names(schema, path);
    return std::make_unique<ParquetFileWriter>(path, schema, options, codec);
}

}  // namespace spillway::io::detail

namespace spillway::io {

namespace detail {
/// A Parquet file's parsed footer.
struct ParquetFooter {
    std::shared_ptr<parquet::FileMetaData> metadata;
};
}  // namespace detail

ParquetRowGroups::ParquetRowGroups(std::filesystem::path path) : path_(std::move(path)) {
    auto const reader = detail::open_reader(path_.string());
    std::shared_ptr<arrow::Schema> schema;
    detail::check(reader->GetSchema(&schema), "cannot read the schema of '" + path_.string() + "'");
    schema_ = detail::to_spillway(*schema, path_.string());
    row_groups_ = static_cast<std::size_t>(reader->num_row_groups());
    footer_ = std::make_shared<detail::ParquetFooter const>(
        detail::ParquetFooter{.metadata = reader->parquet_reader()->metadata()}
    );
}

void ParquetRowGroups::check_group(std::size_t group) const {
    SPILLWAY_EXPECTS(group < row_groups_,
                     "row group " << group << " of '" << path_.string() << "', which has " << row_groups_,
                     InvalidArgument);
}

std::uint64_t ParquetRowGroups::rows(std::size_t group) const {
    check_group(group);
    return static_cast<std::uint64_t>(footer_->metadata->RowGroup(static_cast<int>(group))->num_rows());
}

table::Table ParquetRowGroups::read(std::size_t group) const { return read_columns(group, {}); }

std::unique_ptr<TableFileReader> ParquetRowGroups::reader(std::vector<std::size_t> const& groups) const {
    for (auto const group : groups) {
        check_group(group);
    }
    return std::make_unique<detail::ParquetFileReader>(path_, groups, footer_->metadata);
}

table::Table ParquetRowGroups::read(std::size_t group, std::span<std::string const> columns) const {
    check_group(group);
    for (auto const& name : columns) {
        static_cast<void>(schema_.index_of(name));  // throws naming the columns there are
    }
    std::vector<int> indices;
    for (std::size_t index = 0; index < schema_.size(); ++index) {
        if (std::find(columns.begin(), columns.end(), schema_.field(index).name) != columns.end()) {
            indices.push_back(static_cast<int>(index));
        }
    }
    if (indices.empty()) {
        return {};
    }
    return read_columns(group, indices);
}

table::Table ParquetRowGroups::read_columns(std::size_t group, std::vector<int> const& columns) const {
    check_group(group);
    auto const path = path_.string();
    auto const reader = detail::open_reader(path, {static_cast<int>(group)}, footer_->metadata);
    auto const what = "cannot read row group " + std::to_string(group) + " of '" + path + "'";
    auto const batches = detail::guarded(what, [&] {
        std::vector<int> const groups{static_cast<int>(group)};
        return detail::value_of(columns.empty() ? reader->GetRecordBatchReader(groups)
                                                : reader->GetRecordBatchReader(groups, columns),
                                what);
    });
    std::vector<table::Table> tables;
    while (true) {
        std::shared_ptr<arrow::RecordBatch> batch;
        detail::guarded(what, [&] { detail::check_decoded(batches->ReadNext(&batch), what); });
        if (batch == nullptr) {
            break;
        }
        tables.push_back(detail::to_table(*batch, path));
    }
    if (tables.empty()) {  // a row group without rows reads as no batch at all
        return detail::to_table(*detail::value_of(arrow::RecordBatch::MakeEmpty(batches->schema()), what), path);
    }
    if (tables.size() == 1) {
        return std::move(tables.front());
    }
    return table::Table::concatenate(tables);
}

}  // namespace spillway::io
