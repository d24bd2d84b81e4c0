#pragma once
/// @file
/// How the csv_reader fuzz target reads its input and the options it reads
/// the file with, and how the seed writer writes one (kept apart from
/// input_layouts.hpp because it needs the table module).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <spillway/io/csv_options.hpp>

#include "fuzz_bytes.hpp"

namespace spillway::fuzz {

// --- csv_reader: u8 options (bit 0: '|' delimits, not ','; bit 1: no header;
// bit 2: every row ends with a delimiter; bit 3: no quoting; bits 4-7: the
// chunk size, (n + 1) * 64 bytes), then the file's bytes. ---

/// A CSV file and the options it is read with.
struct CsvInput {
    std::uint8_t options;
    std::span<std::byte const> file;
};

/// The options the bits of a `CsvInput` ask for; rows are inferred from
/// the first 4, so that a type change soon after them is reached.
inline io::CsvOptions csv_options(std::uint8_t bits) {
    io::CsvOptions options;
    options.delimiter = (bits & 1) != 0 ? '|' : ',';
    options.header = (bits & 2) == 0;
    options.trailing_delimiter = (bits & 4) != 0;
    if ((bits & 8) != 0) {
        options.quote.reset();
    }
    options.chunk_bytes = (static_cast<std::size_t>(bits >> 4) + 1) * 64;
    options.infer_rows = 4;
    return options;
}

inline CsvInput read_csv_input(std::span<std::byte const> input) {
    ByteReader reader(input);
    auto const options = reader.take<std::uint8_t>();
    return {options, reader.rest()};
}

inline std::vector<std::byte> write_csv_input(std::uint8_t options, std::string_view file) {
    ByteWriter writer;
    writer.put(options);
    writer.put_bytes(std::as_bytes(std::span(file)));
    return writer.bytes();
}

}  // namespace spillway::fuzz
