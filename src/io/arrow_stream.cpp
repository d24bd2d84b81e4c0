#include <spillway/io/arrow_stream.hpp>

#include <arrow/c/bridge.h>
#include <arrow/record_batch.h>

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
        auto const batch = detail::value_of(reader_->Next(), "cannot read the next batch of " + description_);
        if (batch == nullptr) {
            return std::nullopt;
        }
        return detail::to_table(*batch, description_);
    }

    [[nodiscard]] std::optional<std::uint64_t> rows() const noexcept override { return std::nullopt; }
    [[nodiscard]] std::uint64_t largest_read_bytes() const noexcept override { return 0; }

  private:
    std::shared_ptr<arrow::RecordBatchReader> reader_;
    std::string description_;
    table::Schema schema_;
};

}  // namespace

std::unique_ptr<TableFileReader> open_arrow_stream(ArrowArrayStream* stream, std::string description) {
    SPILLWAY_EXPECTS(stream != nullptr && stream->release != nullptr,
                     "the ArrowArrayStream of " << description << " is null or already released", InvalidArgument);
    // A stream of plain arrays (a column, not a table) is a caller's mistake,
    // not corrupt data.
    ArrowSchema schema{};
    if (stream->get_schema(stream, &schema) == 0) {
        std::string const format = schema.format == nullptr ? "" : schema.format;
        schema.release(&schema);
        SPILLWAY_EXPECTS(format == "+s",
                         description << " is a stream of arrays of Arrow format '" << format
                                     << "', not of record batches: spillway reads tables of columns",
                         InvalidArgument);
    }
    auto reader = detail::value_of(arrow::ImportRecordBatchReader(stream), "cannot read the schema of " + description);
    return std::make_unique<ArrowStreamReader>(std::move(reader), std::move(description));
}

}  // namespace spillway::io
