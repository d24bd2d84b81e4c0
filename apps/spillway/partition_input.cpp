#include "partition_input.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>

#include <spillway/core/error.hpp>

#include "input_files.hpp"

namespace spillway::cli {

io::FileFormat input_format_of(PartitionArguments const& arguments) {
    if (!arguments.input_format.empty()) {
        return io::parse_file_format(arguments.input_format);
    }
    return arguments.inputs.empty() ? io::FileFormat::csv : io::format_of(arguments.inputs.front());
}

io::FileFormat output_format_of(PartitionArguments const& arguments) {
    return arguments.output_format.empty() ? input_format_of(arguments)
                                           : io::parse_file_format(arguments.output_format);
}

PartitionInput::PartitionInput(PartitionArguments const& arguments, Options const& options) {
    auto const format = input_format_of(arguments);
    if (format == io::FileFormat::csv) {
        csv_input_.emplace(CsvInput::open(arguments.inputs, arguments.keys, options, arguments.schema));
        return;
    }
    SPILLWAY_EXPECTS(arguments.schema.empty(), "--schema applies to CSV input; " << io::to_string(format)
                                                   << " files carry their column types",
                     InvalidArgument);
    table_input_.emplace(TableInput::open(arguments.inputs, arguments.keys, format));
    csv_output_ = io::CsvOptions::from_options(options);
    if (format == io::FileFormat::parquet) {
        for (auto const& file : table_input_->files) {
            row_groups_.emplace_back(file);
        }
    }
}

io::FileFormat PartitionInput::format() const noexcept {
    return csv_input_ ? io::FileFormat::csv : table_input_->format;
}

std::size_t PartitionInput::files() const noexcept {
    return csv_input_ ? csv_input_->files.size() : table_input_->files.size();
}

table::Schema const& PartitionInput::schema() const noexcept {
    return csv_input_ ? csv_input_->schema : table_input_->schema;
}

std::vector<std::size_t> const& PartitionInput::keys() const noexcept {
    return csv_input_ ? csv_input_->keys : table_input_->keys;
}

io::CsvOptions PartitionInput::csv_options() const { return csv_input_ ? csv_input_->options : csv_output_; }

std::uint64_t PartitionInput::bytes() const noexcept { return csv_input_ ? csv_input_->bytes : table_input_->bytes; }

std::uint64_t PartitionInput::piece_bytes() const noexcept {
    return csv_input_ ? csv_input_->options.chunk_bytes : std::max<std::uint64_t>(table_input_->largest_read_bytes, 1);
}

std::uint64_t PartitionInput::pieces(std::size_t ranks) const noexcept {
    auto const reads = [](std::uint64_t amount, std::uint64_t per_read) { return (amount + per_read - 1) / per_read; };
    if (csv_input_) {
        // A block ends at its last whole row: a little short of the block
        // size, by up to a row (here, rows of up to a sixteenth of it).
        auto const block = csv_input_->options.chunk_bytes;
        return reads(csv_input_->bytes, block - block / 16) + csv_input_->files.size();
    }
    std::uint64_t pieces = 0;
    for (std::size_t file = 0; file < table_input_->files.size(); ++file) {
        if (auto const listed = table_input_->file_reads[file]) {
            pieces += *listed;
        } else if (row_groups_.empty()) {
            pieces += std::max<std::uint64_t>(1, reads(table_input_->file_rows[file], io::rows_per_read));
        } else {
            // Each rank reads its share of the row groups in batches that end
            // at a group where a column is read as a dictionary, and at the
            // end of its share.
            pieces += row_groups_[file].size() + reads(table_input_->file_rows[file], io::rows_per_read) + ranks;
        }
    }
    return pieces;
}

std::uint64_t PartitionInput::reader_bytes() const noexcept { return csv_input_ ? 0 : table_input_->reader_bytes; }

bool PartitionInput::skips_bad_rows() const noexcept {
    return csv_input_ && csv_input_->options.bad_rows == io::CsvOptions::BadRows::skip;
}

std::vector<std::vector<std::size_t>> PartitionInput::row_group_share(std::size_t rank, std::size_t ranks) const {
    std::vector<std::vector<std::size_t>> share(row_groups_.size());
    std::size_t dealt = 0;
    for (std::size_t file = 0; file < row_groups_.size(); ++file) {
        for (std::size_t group = 0; group < row_groups_[file].size(); ++group, ++dealt) {
            if (dealt % ranks == rank) {
                share[file].push_back(group);
            }
        }
    }
    return share;
}

std::uint64_t PartitionInput::progress_total(std::size_t rank, std::size_t ranks) const {
    std::uint64_t total = 0;
    if (csv_input_) {
        for (auto const file : file_share(csv_input_->files.size(), rank, ranks)) {
            total += std::filesystem::file_size(csv_input_->files[file]);
        }
    } else if (row_groups_.empty()) {
        for (auto const file : file_share(table_input_->files.size(), rank, ranks)) {
            total += table_input_->file_rows[file];
        }
    } else {
        auto const share = row_group_share(rank, ranks);
        for (std::size_t file = 0; file < share.size(); ++file) {
            for (auto const group : share[file]) {
                total += row_groups_[file].rows(group);
            }
        }
    }
    return total;
}

std::function<std::optional<InputPiece>()> PartitionInput::source(std::size_t rank, std::size_t ranks) const {
    if (csv_input_) {
        auto blocks = std::make_shared<CsvBlockSource>(*csv_input_, file_share(csv_input_->files.size(), rank, ranks));
        return [blocks]() -> std::optional<InputPiece> {
            auto block = (*blocks)();
            return block ? std::optional<InputPiece>(std::move(*block)) : std::nullopt;
        };
    }
    std::shared_ptr<TableSource> tables;
    if (row_groups_.empty()) {
        tables = std::make_shared<TableSource>(*table_input_, file_share(table_input_->files.size(), rank, ranks));
    } else {
        auto share = row_group_share(rank, ranks);
        std::vector<std::size_t> files;
        for (std::size_t file = 0; file < share.size(); ++file) {
            if (!share[file].empty()) {
                files.push_back(file);
            }
        }
        tables = std::make_shared<TableSource>(
            *table_input_, std::move(files),
            [this, share = std::move(share)](std::size_t file) { return row_groups_[file].reader(share[file]); }
        );
    }
    return [tables]() -> std::optional<InputPiece> {
        auto table = (*tables)();
        return table ? std::optional<InputPiece>(std::move(*table)) : std::nullopt;
    };
}

InputTable PartitionInput::to_table(InputPiece piece) const {
    if (auto* block = std::get_if<FileBlock>(&piece)) {
        auto rows = csv_input_->parse_all(block->file, block->block);
        return InputTable{std::move(rows.columns), rows.skipped_rows, block->block.text().size()};
    }
    auto& read = std::get<FileTable>(piece);
    auto const rows = read.table.num_rows();
    return InputTable{std::move(read.table), 0, rows};
}

}  // namespace spillway::cli
