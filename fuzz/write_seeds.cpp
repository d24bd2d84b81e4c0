/// @file
/// Writes the seed corpus of every fuzz target under the directory given:
/// `<directory>/<target>/<seed>`. The seeds are made by spillway's own
/// writers (CSV text, packed tables, compressed spill payloads, wire
/// messages), so that they follow the formats as they are; rerun it when a
/// format changes and commit what it writes.
///
/// Usage: spillway_fuzz_seeds <corpus directory>

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <spillway/io/csv_reader.hpp>
#include <spillway/table/packed_table.hpp>

#include "csv_input.hpp"
#include "input_layouts.hpp"
#include "memory_file.hpp"
#include "wire_input.hpp"

namespace {

using namespace spillway;
using shuffle::detail::MessageKind;
using shuffle::detail::WireHeader;

/// CSV files and the option bits of `read_csv_input` they are read with.
struct CsvSeed {
    char const* name;
    std::uint8_t options;
    std::string_view text;
};

constexpr std::uint8_t comma_header = 0x10;  // ',', a header, quoting, 128-byte chunks
constexpr std::uint8_t tbl = 0x17;           // '|', no header, a trailing delimiter

CsvSeed const csv_seeds[] = {
    {"typed", comma_header,
     "id,name,price,day\n1,apple,1.5,2024-01-02\n2,\"pear, green\",2.25,2024-02-29\n3,,,\n"
     "-9223372036854775808,\"say \"\"hi\"\"\",-0.0,1970-01-01\n"},
    {"crlf_bom", comma_header, "\xEF\xBB\xBFkey,value\r\n7,seven\r\n8,\"multi\r\nline\"\r\n"},
    {"tbl", tbl, "1|O|173665.47|1996-01-02|Clerk#000000951|\n2|F|46929.18|1996-12-01|Clerk#000000880|\n"},
    {"type_change", comma_header, "a,b\n1,x\n2,y\n3,z\n4,w\nnot a number,v\n"},
    {"wrong_field_count", comma_header, "a,b,c\n1,2,3\n4,5\n6,7,8,9\n"},
    {"unquoted", 0x18, "a,b\n\"1,2\n"},
    {"long_row", 0x00, "a,b\n1,aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"},
};

void write(std::filesystem::path const& path, std::span<std::byte const> bytes) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<char const*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!file) {
        throw std::runtime_error("cannot write " + path.string());
    }
}

/// The tables of the CSV seeds that parse, read as the csv_reader target reads them.
std::vector<table::Table> tables_of_csv_seeds(std::filesystem::path const& scratch) {
    std::vector<table::Table> tables;
    for (auto const& seed : csv_seeds) {
        auto const path = scratch / (std::string(seed.name) + ".csv");
        write(path, std::as_bytes(std::span(seed.text)));
        try {
            io::CsvReader reader(path, fuzz::csv_options(seed.options));
            while (auto table = reader.read()) {
                tables.push_back(std::move(*table));
            }
        } catch (Error const&) {
            // a seed of a malformed file
        }
    }
    return tables;
}

/// A chunk message carrying `packed`, its metadata after the header or, if
/// `inline_metadata`, at the end of the payload.
std::vector<std::byte> chunk_message_bytes(
    shuffle::PartitionId partition, std::uint64_t sequence, table::PackedTable const& packed, bool inline_metadata
) {
    auto payload = packed.payload;
    std::span<std::byte const> body = packed.metadata;
    WireHeader header{MessageKind::chunk, {}, 0, partition, sequence};
    if (inline_metadata) {
        payload.insert(payload.end(), packed.metadata.begin(), packed.metadata.end());
        header.inline_metadata = static_cast<std::uint16_t>(packed.metadata.size());
        body = {};
    }
    fuzz::WireMessageInput const message{header, false, body, payload};
    return fuzz::write_wire_input(std::span(&message, 1));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: spillway_fuzz_seeds <corpus directory>\n";
        return 2;
    }
    std::filesystem::path const corpus = argv[1];
    auto const scratch = std::filesystem::temp_directory_path() / ("spillway-fuzz-seeds-" + std::to_string(::getpid()));
    std::filesystem::create_directories(scratch);

    for (auto const& seed : csv_seeds) {
        write(corpus / "csv_reader" / seed.name, fuzz::write_csv_input(seed.options, seed.text));
    }

    auto const tables = tables_of_csv_seeds(scratch);
    std::filesystem::remove_all(scratch);
    std::vector<table::PackedTable> packed;
    for (auto const& table : tables) {
        packed.push_back(table::pack(table));
    }
    for (std::size_t i = 0; i < packed.size(); ++i) {
        write(corpus / "unpack" / ("table" + std::to_string(i)),
              fuzz::write_packed_input({packed[i].metadata, packed[i].payload}));
    }

    for (std::size_t i = 0; i < packed.size(); ++i) {
        for (auto const codec : {memory::Codec::lz4, memory::Codec::zstd}) {
            fuzz::MemoryFile file;
            auto const stored_size = fuzz::write_compressed(file, codec, packed[i].payload);
            auto const name = std::string(codec == memory::Codec::lz4 ? "lz4_" : "zstd_") + "table" + std::to_string(i);
            fuzz::SpillRecordInput const record{codec, static_cast<std::uint32_t>(packed[i].payload.size()),
                                                file.bytes().first(stored_size)};
            write(corpus / "spill_record" / name, fuzz::write_spill_record_input(record));
        }
    }

    // Rank 1 owns partitions 1 and 3 of the exchange_wire target's 4.
    auto two_chunks = chunk_message_bytes(1, 0, packed.at(0), false);
    auto const inlined = chunk_message_bytes(3, 1, packed.at(1), true);
    two_chunks.insert(two_chunks.end(), inlined.begin(), inlined.end());
    fuzz::WireMessageInput const heartbeat_and_finish[] = {
        {WireHeader{MessageKind::heartbeat, {}, 0, 0, 0}, false, {}, std::nullopt},
        {WireHeader{MessageKind::finish, {}, 0, 0, 2}, false, {}, std::nullopt},
    };
    auto const ending = fuzz::write_wire_input(heartbeat_and_finish);
    two_chunks.insert(two_chunks.end(), ending.begin(), ending.end());
    write(corpus / "exchange_wire" / "two_chunks", two_chunks);
    std::string_view const reason = "out of memory on rank 0";
    WireHeader const abandon_header{MessageKind::abandon, shuffle::detail::ErrorKind::out_of_memory, 0, 0, 0};
    fuzz::WireMessageInput const abandon{abandon_header, false, std::as_bytes(std::span(reason)), std::nullopt};
    write(corpus / "exchange_wire" / "abandon", fuzz::write_wire_input(std::span(&abandon, 1)));
    write(corpus / "exchange_wire" / "not_owned", chunk_message_bytes(2, 0, packed.at(0), false));

    std::vector<std::vector<std::string>> const command_lines = {
        {"shuffle", "--memory-limit", "256MiB", "--partitions", "1000", "--scale", "0.5", "--codec", "lz4"},
        {"shuffle", "--ranks", "3", "--collective-timeout", "1.5s", "--window", "8", "--threads", "2", "--json"},
        {"partition", "-i", "a.csv,b.csv", "-k", "id,name", "-o", "out", "--partitions", "64", "--block-size", "1MiB",
         "--delimiter", "|", "--header", "false", "--bad-rows", "skip", "--output-format", "parquet"},
        {"generate", "--table", "lineitem", "--scale", "0.01", "-o", "lineitem.tbl", "--seed", "7"},
        {"--help"},
        {"shuffle", "--memory-limit", "18446744073709551615", "--quiet"},
    };
    for (std::size_t i = 0; i < command_lines.size(); ++i) {
        write(corpus / "command_line" / ("args" + std::to_string(i)), fuzz::write_command_line_input(command_lines[i]));
    }
    std::cout << "wrote the seed corpus under " << corpus.string() << "\n";
    return 0;
}
