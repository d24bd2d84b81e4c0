#include <spillway/io/arrow_stream.hpp>

#include <arrow/c/bridge.h>
#include <arrow/record_batch.h>

#include <algorithm>

#include <spillway/core/error.hpp>

#include "arrow_tables.hpp"

namespace spillway::io {
namespace {

/// Reads the batches of an imported Arrow C stream.
class ArrowStreamReader final : public TableFileReader {
  public:
    ArrowStreamReader(std::shared_ptr<arrow::RecordBatchReader> reader, std::string description)
        : reader_(std::move(reader)), description_(std::move(description)),
          schema_(detail::to_spillway(*reader_->schema(), description_)) {}

    [[nodiscard]] table::Schema const& schema() const noexcept override { return schema_; }

    [[nodiscard]] std::optional<table::Table> read() override {
        if (batch_ == nullptr) {
            auto next = reader_->Next();
            if (!next.ok()) {  // the producer failed: its message, whatever code it chose
                SPILLWAY_FAIL(description_ << " failed to give its next batch: " << next.status().message(), IoError);
            }
            batch_ = std::move(*next);
            offset_ = 0;
            if (batch_ == nullptr) {
                return std::nullopt;
            }
        }
        auto const rows = std::min<std::int64_t>(batch_->num_rows() - offset_, rows_per_read);
        auto table = detail::to_table(*batch_->Slice(offset_, rows), description_);
        offset_ += rows;
        if (offset_ == batch_->num_rows()) {
            batch_.reset();
        }
        return table;
    }

    [[nodiscard]] std::optional<std::uint64_t> rows() const noexcept override { return std::nullopt; }
    [[nodiscard]] std::uint64_t largest_read_bytes() const noexcept override { return 0; }

  private:
    std::shared_ptr<arrow::RecordBatchReader> reader_;
    std::string description_;
    table::Schema schema_;
    std::shared_ptr<arrow::RecordBatch> batch_;  ///< the batch being read, if any
    std::int64_t offset_ = 0;                    ///< its first row not yet read
};

}  // namespace

std::unique_ptr<TableFileReader> open_arrow_stream(ArrowArrayStream* stream, std::string description) {
    SPILLWAY_EXPECTS(stream != nullptr && stream->release != nullptr,
                     "the ArrowArrayStream of " << description << " is null or already released", InvalidArgument);
    // The stream is this function's from here: released on every error.
    ArrowSchema schema{};
    if (stream->get_schema(stream, &schema) != 0) {
        char const* error = stream->get_last_error(stream);
        std::string const message = error == nullptr ? "no message" : error;
        stream->release(stream);
        SPILLWAY_FAIL(description << " failed to give its schema: " << message, IoError);
    }
    // A stream of plain arrays (a column, not a table) is a caller's mistake,
    // not corrupt data.
    std::string const format = schema.format == nullptr ? "" : schema.format;
    schema.release(&schema);
    if (format != "+s") {
        stream->release(stream);
        SPILLWAY_FAIL(description << " is a stream of arrays of Arrow format '" << format
                                  << "', not of record batches: spillway reads tables of columns",
                      InvalidArgument);
    }
    // The schema came whole; what the Arrow library finds invalid in it is a
    // type it does not know (a format string such as Polars' `_pli128`).
    auto reader = arrow::ImportRecordBatchReader(stream);
    SPILLWAY_EXPECTS(!reader.status().IsInvalid(),
                     "the schema of " << description << " holds a type spillway does not read: "
                                      << reader.status().message(),
                     InvalidArgument);
    detail::check(reader.status(), "cannot read the schema of " + description);
    return std::make_unique<ArrowStreamReader>(std::move(reader).ValueUnsafe(), std::move(description));
}

}  // namespace spillway::io
