#include <spillway/io/csv_reader.hpp>
#include <spillway/io/csv_writer.hpp>

#include "formats.hpp"

namespace spillway::io::detail {
namespace {

/// A CSV file read block by block with spillway's own reader.
class CsvFileReader final : public TableFileReader {
  public:
    CsvFileReader(std::filesystem::path const& path, io::CsvOptions const& csv, std::optional<table::Schema> schema)
        : reader_(path, csv, std::move(schema)), block_bytes_(csv.chunk_bytes) {}

    [[nodiscard]] table::Schema const& schema() const noexcept override { return reader_.schema(); }
    [[nodiscard]] std::optional<table::Table> read() override { return reader_.read(); }
    [[nodiscard]] std::optional<std::uint64_t> rows() const noexcept override { return std::nullopt; }
    [[nodiscard]] std::uint64_t largest_read_bytes() const noexcept override { return block_bytes_; }

  private:
    io::CsvReader reader_;
    std::uint64_t block_bytes_;
};

class CsvFileWriter final : public TableFileWriter {
  public:
    CsvFileWriter(std::filesystem::path path, table::Schema schema, WriteOptions const& options)
        : path_(std::move(path)), schema_(std::move(schema)), writer_(path_, options.csv, schema_) {}

    void write(table::Table table) override {
        check_writable(table, schema_, closed_, path_);
        writer_.write(table);
    }
    void close() override {
        writer_.close();
        closed_ = true;
    }
    [[nodiscard]] std::uint64_t bytes_written() const noexcept override { return writer_.bytes_written(); }
    [[nodiscard]] std::size_t longest_row_bytes() const noexcept override { return writer_.longest_row_bytes(); }

  private:
    std::filesystem::path path_;
    table::Schema schema_;
    io::CsvWriter writer_;
    bool closed_ = false;
};

}  // namespace

std::unique_ptr<TableFileReader> open_csv_file(std::filesystem::path const& path, io::CsvOptions const& csv,
                                               std::optional<table::Schema> schema) {
    return std::make_unique<CsvFileReader>(path, csv, std::move(schema));
}

std::unique_ptr<TableFileWriter> create_csv_file(std::filesystem::path const& path, table::Schema const& schema,
                                                 WriteOptions const& options) {
    return std::make_unique<CsvFileWriter>(path, schema, options);
}

}  // namespace spillway::io::detail
