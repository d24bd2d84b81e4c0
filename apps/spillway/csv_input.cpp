#include "csv_input.hpp"

#include <algorithm>
#include <numeric>

#include <spillway/core/error.hpp>
#include <spillway/io/file_format.hpp>
#include <spillway/table/data_type.hpp>

#include "input_files.hpp"
#include "key_columns.hpp"

namespace spillway::cli {
namespace {

/// `schema` with the types that `declared` (`name:type` entries) gives;
/// marks those columns in `is_declared`.
table::Schema declare_types(table::Schema const& schema, std::vector<std::string> const& declared,
                            std::vector<bool>& is_declared) {
    auto fields = schema.fields();
    is_declared.assign(fields.size(), false);
    for (auto const& entry : declared) {
        auto const colon = entry.rfind(':');
        SPILLWAY_EXPECTS(colon != std::string::npos && colon != 0,
                         "--schema takes column:type entries (such as user_id:int64), got '" << entry << "'",
                         InvalidArgument);
        auto const name = entry.substr(0, colon);
        auto const column = schema.find(name);
        SPILLWAY_EXPECTS(column.has_value(),
                         "--schema names column '" << name << "', which the input does not have; its columns are: "
                                                   << schema.to_string(),
                         InvalidArgument);
        SPILLWAY_EXPECTS(!is_declared[*column], "--schema gives column '" << name << "' twice", InvalidArgument);
        try {
            fields[*column].type = table::parse_data_type(entry.substr(colon + 1));
        } catch (InvalidArgument const& error) {
            SPILLWAY_FAIL("--schema " << entry << ": " << error.what(), InvalidArgument);
        }
        is_declared[*column] = true;
    }
    return table::Schema(std::move(fields));
}

/// `names`' columns, in their order, each with the type `typed` gives a
/// column of its name (string where it has none).
table::Schema types_by_name(table::Schema const& names, table::Schema const& typed) {
    auto fields = names.fields();
    for (auto& field : fields) {
        auto const column = typed.find(field.name);
        field.type = column ? typed.field(*column).type : table::DataType::string;
    }
    return table::Schema(std::move(fields));
}

}  // namespace

CsvInput CsvInput::open(std::vector<std::filesystem::path> files, std::vector<std::string> const& keys,
                        Options const& options, std::vector<std::string> const& declared) {
    SPILLWAY_EXPECTS(!files.empty(), "no input file was given; name the CSV files with --input", InvalidArgument);
    CsvInput input;
    auto const defaults = io::is_tbl(files.front()) ? io::CsvOptions::tbl() : io::CsvOptions();
    input.options = io::CsvOptions::from_options(options, defaults);
    // Without a header, an empty file is a file of no rows, as `partition`
    // writes an empty partition; with one, it lacks the header.
    std::uint64_t largest = 0;
    std::vector<bool> empty;
    for (auto const& file : files) {
        auto const size = input_file_size(file);
        SPILLWAY_EXPECTS(size != 0 || !input.options.header,
                         "input file '" << file.string() << "' is empty: it has no header and no rows",
                         InvalidArgument);
        input.bytes += size;
        largest = std::max(largest, size);
        empty.push_back(size == 0);
    }
    auto const first_file = static_cast<std::size_t>(std::ranges::find(empty, false) - empty.begin());
    SPILLWAY_EXPECTS(first_file < files.size(),
                     "every input file is empty: there are no rows, and no columns to find the keys in",
                     InvalidArgument);
    // A block larger than every file holds nothing more: small files need
    // only as much memory as they take.
    input.options.chunk_bytes = static_cast<std::size_t>(std::clamp<std::uint64_t>(
        largest + 1, io::CsvOptions::min_chunk_bytes, input.options.chunk_bytes));
    {
        io::CsvReader first(files[first_file], input.options);
        SPILLWAY_EXPECTS(first.schema().size() != 0,
                         "input file '" << files[first_file].string() << "' is empty: it has no header and no rows",
                         InvalidArgument);
        auto inferred = first.schema();
        input.inferred_rows = first.inferred_rows();
        input.inferred_from = files[first_file];
        // A first file of only a header tells no types (every column would
        // be string): they come from the first file that has rows.
        for (auto file = first_file + 1; input.inferred_rows == 0 && file < files.size(); ++file) {
            io::CsvReader const other(files[file], input.options);
            if (other.inferred_rows() != 0) {
                inferred = types_by_name(first.schema(), other.schema());
                input.inferred_rows = other.inferred_rows();
                input.inferred_from = files[file];
            }
        }
        input.schema = declare_types(inferred, declared, input.declared);
        input.header = first.header_line();
    }
    // Only the names of each file's columns are wanted here: one row of
    // inference is enough.
    auto names_only = input.options;
    names_only.infer_rows = 1;
    for (std::size_t file = 0; file < files.size(); ++file) {
        if (empty[file]) {
            input.field_orders.emplace_back();
            continue;
        }
        std::vector<std::string> names;
        io::CsvReader const reader(files[file], names_only);
        for (auto const& field : reader.schema().fields()) {
            names.push_back(field.name);
        }
        input.field_orders.push_back(match_column_names(input.schema, files[first_file], names, files[file]));
    }
    input.files = std::move(files);
    input.keys = resolve_keys(input.schema, keys);
    return input;
}

table::Schema CsvInput::file_schema(std::size_t file) const {
    auto const& order = field_orders.at(file);
    if (order.empty()) {
        return schema;
    }
    auto fields = schema.fields();
    for (std::size_t column = 0; column < order.size(); ++column) {
        fields[order[column]] = schema.field(column);
    }
    return table::Schema(std::move(fields));
}

std::vector<bool> CsvInput::file_inferred(std::size_t file) const {
    auto const& order = field_orders.at(file);
    std::vector<bool> inferred(declared.size());
    for (std::size_t column = 0; column < declared.size(); ++column) {
        inferred[order.empty() ? column : order[column]] = !declared[column];
    }
    return inferred;
}

std::vector<std::size_t> CsvInput::file_keys(std::size_t file) const {
    auto const& order = field_orders.at(file);
    if (order.empty()) {
        return keys;
    }
    std::vector<std::size_t> fields;
    for (auto const key : keys) {
        fields.push_back(order[key]);
    }
    return fields;
}

io::CsvRows CsvInput::parse_keys(std::size_t file, io::CsvBlock const& block) const {
    return parse(file, block, file_keys(file), true);
}

io::CsvRows CsvInput::parse_all(std::size_t file, io::CsvBlock const& block) const {
    auto fields = field_orders.at(file);
    if (fields.empty()) {
        fields.resize(schema.size());
        std::iota(fields.begin(), fields.end(), std::size_t{0});
    }
    return parse(file, block, fields, false);
}

io::CsvRows CsvInput::parse(std::size_t file, io::CsvBlock const& block, std::vector<std::size_t> const& fields,
                               bool reorder) const {
    try {
        auto const& order = field_orders.at(file);
        return order.empty() || !reorder ? block.parse_columns(fields) : block.parse_columns(fields, order);
    } catch (io::CsvValueError const& error) {
        auto const column = schema.index_of(error.column());
        if (declared[column]) {
            throw;
        }
        auto const more_rows = inferred_rows < options.infer_rows ? "" : ", or infer from more rows with --infer-rows";
        SPILLWAY_FAIL(error.what() << ": the type was inferred from the first " << inferred_rows << " rows of '"
                                   << inferred_from.string() << "'; declare it with --schema " << error.column()
                                   << ":string (or another type)" << more_rows,
                      CorruptData);
    }
}

CsvBlockSource::CsvBlockSource(std::vector<std::filesystem::path> files, io::CsvOptions options,
                               std::vector<table::Schema> schemas, std::vector<std::vector<bool>> inferred)
    : files_(std::move(files)), options_(options), schemas_(std::move(schemas)), inferred_(std::move(inferred)),
      indices_(file_share(files_.size(), 0, 1)) {
    SPILLWAY_ASSERT(schemas_.size() == files_.size() && inferred_.size() == files_.size(),
                    "one schema and one list of inferred columns per file");
}

CsvBlockSource::CsvBlockSource(CsvInput const& input) : CsvBlockSource(input, file_share(input.files.size(), 0, 1)) {}

CsvBlockSource::CsvBlockSource(CsvInput const& input, std::vector<std::size_t> const& files)
    : options_(input.options), indices_(files) {
    for (auto const file : files) {
        files_.push_back(input.files[file]);
        schemas_.push_back(input.file_schema(file));
        inferred_.push_back(input.file_inferred(file));
    }
}

std::optional<FileBlock> CsvBlockSource::operator()() {
    while (true) {
        if (!reader_) {
            if (next_file_ == files_.size()) {
                return std::nullopt;
            }
            reader_ = std::make_unique<io::CsvReader>(files_[next_file_], options_, schemas_[next_file_],
                                                      inferred_[next_file_]);
            ++next_file_;
        }
        if (auto block = reader_->read_block()) {
            return FileBlock{indices_[next_file_ - 1], std::move(*block)};
        }
        reader_.reset();
    }
}

}  // namespace spillway::cli
