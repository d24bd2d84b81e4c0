#include <arrow/buffer.h>
#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>
#include <arrow/ipc/writer.h>
#include <arrow/memory_pool.h>
#include <arrow/util/compression.h>

#include <string_view>

#include <spillway/core/error.hpp>

#include "arrow_memory.hpp"
#include "arrow_output_file.hpp"
#include "arrow_tables.hpp"
#include "compression.hpp"
#include "formats.hpp"

namespace spillway::io::detail {
namespace {

/// Whether `file` begins as an Arrow IPC file (Feather version 2) does,
/// rather than as a stream.
bool starts_as_ipc_file(arrow::io::ReadableFile& file, std::string const& what) {
    constexpr std::string_view magic = "ARROW1";
    auto const start = value_of(file.ReadAt(0, static_cast<std::int64_t>(magic.size())), what);
    check(file.Seek(0), what);  // a stream is read on from its start
    return start->ToString() == magic;
}

/// Reads an Arrow IPC file (Feather version 2), or an Arrow IPC stream, one
/// record batch at a time.
class ArrowFileReader final : public TableFileReader {
  public:
    explicit ArrowFileReader(std::filesystem::path const& path) : path_(path.string()) {
        auto const file = value_of(arrow::io::ReadableFile::Open(path_, arrow_memory_pool()),
                                   "cannot open Arrow file '" + path_ + "'");
        auto options = arrow::ipc::IpcReadOptions::Defaults();
        options.memory_pool = arrow_memory_pool();
        auto const what = "'" + path_ + "' is not a readable Arrow IPC file or stream";
        if (starts_as_ipc_file(*file, "cannot read '" + path_ + "'")) {
            file_reader_ = decoded_value_of(arrow::ipc::RecordBatchFileReader::Open(file, options), what);
            schema_ = to_spillway(*file_reader_->schema(), path_);
            rows_ = static_cast<std::uint64_t>(
                decoded_value_of(file_reader_->CountRows(), "cannot count the rows of '" + path_ + "'"));
        } else {
            stream_reader_ = decoded_value_of(arrow::ipc::RecordBatchStreamReader::Open(file, options), what);
            schema_ = to_spillway(*stream_reader_->schema(), path_);
        }
    }

    [[nodiscard]] table::Schema const& schema() const noexcept override { return schema_; }

    [[nodiscard]] std::optional<table::Table> read() override {
        auto const what = "cannot read record batch " + std::to_string(next_) + " of '" + path_ + "'";
        std::shared_ptr<arrow::RecordBatch> batch;
        if (stream_reader_ != nullptr) {
            check_decoded(stream_reader_->ReadNext(&batch), what);
        } else if (next_ < file_reader_->num_record_batches()) {
            batch = decoded_value_of(file_reader_->ReadRecordBatch(next_), what);
        }
        if (batch == nullptr) {
            return std::nullopt;
        }
        ++next_;
        return to_table(*batch, path_);
    }

    /// A file's rows, as its footer counts them; nothing for a stream.
    [[nodiscard]] std::optional<std::uint64_t> rows() const noexcept override {
        return file_reader_ != nullptr ? std::optional(rows_) : std::nullopt;
    }

    /// A file's record batches, as its footer lists them; nothing for a stream.
    [[nodiscard]] std::optional<std::uint64_t> reads() const noexcept override {
        return file_reader_ != nullptr ? std::optional(static_cast<std::uint64_t>(file_reader_->num_record_batches()))
                                       : std::nullopt;
    }

    /// The file does not record batch sizes in its footer.
    [[nodiscard]] std::uint64_t largest_read_bytes() const noexcept override { return 0; }

  private:
    std::string path_;
    std::shared_ptr<arrow::ipc::RecordBatchFileReader> file_reader_;  ///< one of these two
    std::shared_ptr<arrow::RecordBatchReader> stream_reader_;
    table::Schema schema_;
    std::uint64_t rows_ = 0;
    int next_ = 0;
};

/// Writes an Arrow IPC file, one record batch per table.
class ArrowFileWriter final : public TableFileWriter {
  public:
    /// Requires: `codec` is `compression_of(options, false)`.
    ArrowFileWriter(std::filesystem::path const& path, table::Schema schema, WriteOptions const& options,
                    arrow::Compression::type codec)
        : file_(path, "cannot create Arrow file '" + path.string() + "'"),
          schema_(std::move(schema)),
          arrow_schema_(to_arrow(schema_)) {
        auto const what = "cannot create Arrow file '" + path.string() + "'";
        auto ipc = arrow::ipc::IpcWriteOptions::Defaults();
        ipc.memory_pool = arrow_memory_pool();
        if (codec != arrow::Compression::UNCOMPRESSED) {
            ipc.codec = value_of(arrow::util::Codec::Create(
                                     codec, options.compression_level.value_or(arrow::util::kUseDefaultCompressionLevel)),
                                 what);
        }
        writer_ = value_of(arrow::ipc::MakeFileWriter(file_.stream(), arrow_schema_, ipc), what);
    }

    void write(table::Table table) override {
        check_writable(table, schema_, file_.closed(), file_.path());
        check_utf8(table, file_.path());
        file_.write([&] {
            check(writer_->WriteRecordBatch(*to_record_batch(std::move(table), arrow_schema_)),
                  "cannot write to '" + file_.path().string() + "'");
        });
    }

    void close() override {
        file_.close([&](std::string const& what) { check(writer_->Close(), what); });
    }

    [[nodiscard]] std::uint64_t bytes_written() const noexcept override { return file_.bytes_written(); }

  private:
    ArrowOutputFile file_;
    table::Schema schema_;
    std::shared_ptr<arrow::Schema> arrow_schema_;  ///< `schema_`'s, made once for every table written
    std::shared_ptr<arrow::ipc::RecordBatchWriter> writer_;
};

}  // namespace

std::unique_ptr<TableFileReader> open_arrow_file(std::filesystem::path const& path) {
    return std::make_unique<ArrowFileReader>(path);
}

std::unique_ptr<TableFileWriter> create_arrow_file(std::filesystem::path const& path, table::Schema const& schema,
                                                   WriteOptions const& options) {
    auto const codec = compression_of(options, false);
    check_utf8_names(schema, path);
    return std::make_unique<ArrowFileWriter>(path, schema, options, codec);
}

}  // namespace spillway::io::detail
