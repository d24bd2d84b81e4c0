#include "csv_input.hpp"

#include <algorithm>
#include <charconv>

#include <spillway/core/error.hpp>

namespace spillway::cli {
namespace {

/// The column `key` names: a column name, or else a column number.
std::size_t resolve_key(table::Schema const& schema, std::string const& key) {
    SPILLWAY_EXPECTS(!key.empty(), "an empty key column was given; name one of the columns: " << schema.to_string(),
                     InvalidArgument);
    if (auto const index = schema.find(key)) {
        return *index;
    }
    std::size_t number = 0;
    auto const [end, error] = std::from_chars(key.data(), key.data() + key.size(), number);
    if (error == std::errc{} && end == key.data() + key.size() && number < schema.size()) {
        return number;
    }
    return schema.index_of(key);  // throws, listing the columns
}

}  // namespace

CsvInput CsvInput::open(std::vector<std::filesystem::path> files, std::vector<std::string> const& keys,
                        Options const& options) {
    SPILLWAY_EXPECTS(!files.empty(), "no input file was given; name the CSV files with --input", InvalidArgument);
    CsvInput input;
    for (auto const& file : files) {
        std::error_code error;
        auto const status = std::filesystem::status(file, error);
        SPILLWAY_EXPECTS(std::filesystem::exists(status), "input file '" << file.string() << "' does not exist",
                         InvalidArgument);
        SPILLWAY_EXPECTS(std::filesystem::is_regular_file(status),
                         "input '" << file.string() << "' is not a regular file", InvalidArgument);
        input.bytes += std::filesystem::file_size(file);
    }
    auto const defaults = files.front().extension() == ".tbl" ? table::CsvOptions::tbl() : table::CsvOptions();
    input.options = table::CsvOptions::from_options(options, defaults);
    input.schema = table::CsvReader(files.front(), input.options).schema();
    for (auto const& file : files) {
        static_cast<void>(table::CsvReader(file, input.options, input.schema));
    }
    SPILLWAY_EXPECTS(!keys.empty(), "no key column was given; name one or more with --key from: "
                                        << input.schema.to_string(), InvalidArgument);
    for (auto const& key : keys) {
        auto const index = resolve_key(input.schema, key);
        SPILLWAY_EXPECTS(std::find(input.keys.begin(), input.keys.end(), index) == input.keys.end(),
                         "key column '" << key << "' was given twice", InvalidArgument);
        input.keys.push_back(index);
    }
    input.files = std::move(files);
    return input;
}

CsvBlockSource::CsvBlockSource(std::vector<std::filesystem::path> files, table::CsvOptions options,
                               table::Schema schema)
    : files_(std::move(files)), options_(options), schema_(std::move(schema)) {}

std::optional<FileBlock> CsvBlockSource::operator()() {
    while (true) {
        if (!reader_) {
            if (next_file_ == files_.size()) {
                return std::nullopt;
            }
            reader_ = std::make_unique<table::CsvReader>(files_[next_file_++], options_, schema_);
        }
        if (auto block = reader_->read_block()) {
            return FileBlock{next_file_ - 1, std::move(*block)};
        }
        reader_.reset();
    }
}

}  // namespace spillway::cli
