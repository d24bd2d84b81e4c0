#include "partition_check.hpp"

#include <algorithm>
#include <memory>
#include <numeric>
#include <sstream>

#include <spillway/exec/seq_join.hpp>
#include <spillway/io/parquet_row_groups.hpp>
#include <spillway/io/table_file.hpp>
#include <spillway/table/hash_partition.hpp>

#include "table_input.hpp"

namespace spillway::cli {
namespace {

/// What one piece of a partition file (a CSV block, a table) held, and its
/// bytes or rows, for progress.
struct PieceCheck {
    PartitionCheck found;
    std::uint64_t progress = 0;
};

/// Row group `group` of Parquet file `file` (an index into the files checked).
struct RowGroupToCheck {
    std::size_t file;
    std::shared_ptr<io::ParquetRowGroups const> groups;
    std::size_t group;
};

}  // namespace

PartitionCheck& PartitionCheck::operator+=(PartitionCheck other) {
    checksum += other.checksum;
    if (misplaced_rows == 0) {
        first_misplaced = std::move(other.first_misplaced);
    }
    misplaced_rows += other.misplaced_rows;
    return *this;
}

void report_partition_check(PartitionCheck const& check, table::TableChecksum const& input, RunSummary& summary) {
    bool const placed = check.misplaced_rows == 0;
    bool const complete = check.checksum == input;
    summary.verified = placed && complete;
    if (placed) {
        summary.verification.push_back("every row is in the file of its key's partition");
    } else {
        summary.verification.push_back(std::to_string(check.misplaced_rows) + " rows are in the wrong file"
                                       + (check.first_misplaced.empty() ? "" : "; first: " + check.first_misplaced));
    }
    if (complete) {
        summary.verification.push_back("rows and checksum equal the input's: " + input.to_string());
    } else {
        summary.verification.push_back("rows and checksum differ: input " + input.to_string() + ", output "
                                       + check.checksum.to_string());
    }
}

PartitionCheck check_partition_files(std::vector<std::filesystem::path> const& files, CsvInput const& input,
                                     exec::Executor& executor, std::size_t window, exec::SeqJoinOptions join_options,
                                     Progress& progress) {
    auto const partitions = static_cast<std::uint32_t>(files.size());
    std::vector<std::size_t> key_positions(input.keys.size());
    std::iota(key_positions.begin(), key_positions.end(), std::size_t{0});
    auto const check_block = [&](FileBlock file_block, std::stop_token const&) {
        auto const rows = file_block.block.parse_columns(input.keys);
        auto const partition_of_row = table::partition_rows(rows.columns, key_positions, partitions);
        PieceCheck check{{rows.checksum(), 0, {}}, file_block.block.text().size()};
        for (std::size_t row = 0; row < partition_of_row.size(); ++row) {
            if (partition_of_row[row] == file_block.file) {
                continue;
            }
            if (check.found.misplaced_rows++ == 0) {
                std::ostringstream where;
                where << files[file_block.file].string() << " near line " << file_block.block.first_line() + row
                      << ": a row whose key hashes to partition " << partition_of_row[row] << ", not "
                      << file_block.file;
                check.found.first_misplaced = where.str();
            }
        }
        return check;
    };

    PartitionCheck result;
    std::vector<bool> inferred;
    for (bool const declared : input.declared) {
        inferred.push_back(!declared);
    }
    auto join = exec::seq_join(executor, window,
                               CsvBlockSource(files, input.options, std::vector(files.size(), input.schema),
                                              std::vector(files.size(), inferred)),
                               check_block, std::move(join_options));
    for (auto& check : join) {
        result += std::move(check.found);
        progress.advance(check.progress);
    }
    return result;
}

PartitionCheck check_partition_tables(std::vector<PartitionFile> const& files, std::uint32_t partitions,
                                      io::FileFormat format, io::CsvOptions const& csv, table::Schema const& schema,
                                      std::vector<std::size_t> const& keys, exec::Executor& executor,
                                      std::size_t window, exec::SeqJoinOptions join_options, Progress& progress) {
    auto const check_table = [&](std::size_t file_index, table::Table const& table) {
        auto const& file = files[file_index];
        PieceCheck result{{table::TableChecksum::of(table), 0, {}}, table.num_rows()};
        for (auto const partition : table::partition_rows(table, keys, partitions)) {
            if (partition != file.partition && result.found.misplaced_rows++ == 0) {
                result.found.first_misplaced = file.path.string() + ": a row whose key hashes to partition "
                                               + std::to_string(partition) + ", not " + std::to_string(file.partition);
            }
        }
        return result;
    };
    PartitionCheck result;
    auto const add = [&](auto join) {
        for (auto& check : join) {
            result += std::move(check.found);
            progress.advance(check.progress);
        }
    };
    if (format == io::FileFormat::parquet) {
        // Decoding dominates reading Parquet back, so the workers read the
        // row groups, each in batches; the generator only opens the files.
        auto next_group = [&, next_file = std::size_t{0}, group = std::size_t{0},
                           groups = std::shared_ptr<io::ParquetRowGroups const>()]() mutable
            -> std::optional<RowGroupToCheck> {
            while (!groups || group == groups->size()) {
                if (next_file == files.size()) {
                    return std::nullopt;
                }
                groups = std::make_shared<io::ParquetRowGroups const>(files[next_file++].path);
                group = 0;
            }
            return RowGroupToCheck{next_file - 1, groups, group++};
        };
        auto const check_group = [&](RowGroupToCheck const& piece, std::stop_token const&) {
            PieceCheck group_check;
            auto const reader = piece.groups->reader({piece.group});
            while (auto table = reader->read()) {
                auto checked = check_table(piece.file, *table);
                group_check.found += std::move(checked.found);
                group_check.progress += checked.progress;
            }
            return group_check;
        };
        add(exec::seq_join(executor, window, std::move(next_group), check_group, std::move(join_options)));
        return result;
    }
    auto csv_options = csv;
    csv_options.bad_rows = io::CsvOptions::BadRows::fail;
    auto read_back = [&, next_file = std::size_t{0},
                      reader = std::unique_ptr<io::TableFileReader>()]() mutable -> std::optional<FileTable> {
        while (true) {
            if (!reader) {
                if (next_file == files.size()) {
                    return std::nullopt;
                }
                auto const& file = files[next_file++];
                auto file_options = csv_options;
                file_options.chunk_bytes = std::clamp(file.longest_row_bytes, csv_options.chunk_bytes,
                                                      io::CsvOptions::max_chunk_bytes);
                reader = io::open_table_file(file.path, format, file_options, schema);
            }
            if (auto table = reader->read()) {
                return FileTable{next_file - 1, std::move(*table)};
            }
            reader.reset();
        }
    };
    add(exec::seq_join(executor, window, std::move(read_back),
                       [&](FileTable const& read, std::stop_token const&) { return check_table(read.file, read.table); },
                       std::move(join_options)));
    return result;
}

}  // namespace spillway::cli
