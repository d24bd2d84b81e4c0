/// @file
/// Fuzzes `io::CsvReader`: schema inference, block splitting, quoting and
/// value parsing of a whole file, under the options the input chooses.
///
/// Input: `read_csv_input`. The file is written to a temporary directory of
/// the process; small chunks make rows cross block boundaries. Every error
/// must be a spillway error; anything else, or a crash, is a finding. The two
/// parsers of a block must agree: where `parse` reads every column,
/// `parse_columns` of the last column (the one the partition command reads
/// without parsing the rest) reads the same values.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

#include <spillway/core/error.hpp>
#include <spillway/io/csv_reader.hpp>

#include "csv_input.hpp"

namespace {

using namespace spillway;

/// The file the harness rewrites for every input, in a directory of its own
/// that is removed when the process exits.
std::filesystem::path const& csv_path() {
    struct Directory {
        std::filesystem::path path;
        Directory() {
            std::string name = (std::filesystem::temp_directory_path() / "spillway-fuzz-csv-XXXXXX").string();
            if (::mkdtemp(name.data()) == nullptr) {
                std::abort();
            }
            path = name;
        }
        ~Directory() {
            std::error_code ignored;
            std::filesystem::remove_all(path, ignored);
        }
    };
    static Directory const directory;
    static auto const path = directory.path / "input.csv";
    return path;
}

[[noreturn]] void disagree(char const* what) {
    std::fprintf(stderr, "fuzz/csv_reader: parse read a block where parse_columns found %s\n", what);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    auto const input = fuzz::read_csv_input(std::as_bytes(std::span(data, size)));
    {
        std::ofstream file(csv_path(), std::ios::binary | std::ios::trunc);
        file.write(reinterpret_cast<char const*>(input.file.data()), static_cast<std::streamsize>(input.file.size()));
    }
    try {
        io::CsvReader reader(csv_path(), fuzz::csv_options(input.options));
        while (auto const block = reader.read_block()) {
            auto const parsed = block->parse();
            if (parsed.num_columns() == 0) {
                continue;
            }
            std::size_t const last[] = {parsed.num_columns() - 1};
            io::CsvRows rows;
            try {
                rows = block->parse_columns(last);
            } catch (Error const& error) {
                disagree(error.what());
            }
            if (rows.columns != parsed.select(last)) {
                disagree("other values");
            }
        }
    } catch (Error const&) {
        // CorruptData for a malformed file, InvalidArgument for options it
        // cannot be read with: the documented outcomes.
    }
    return 0;
}
