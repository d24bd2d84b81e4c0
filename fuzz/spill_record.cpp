/// @file
/// Fuzzes the decoders of the disk tier's spill records: the lz4 and zstd
/// streams a compressed spill payload holds (docs/spill_format.md), read
/// back through the staged reader as the disk tier reads a spill file.
///
/// Input: `read_spill_record_input`; the buffer size is taken modulo 1 MiB
/// + 1, so that no input makes the harness allocate much. The payload's
/// checksum lives in memory, not in the file, and is compared after
/// decoding, so the decoder sees every input. A payload that decodes must
/// decode to the same bytes again after the codec compresses it.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include <spillway/core/error.hpp>

#include "input_layouts.hpp"
#include "memory_file.hpp"

namespace {

constexpr std::uint32_t max_buffer_bytes = std::uint32_t{1} << 20;

}  // namespace

using namespace spillway;

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    auto const input = fuzz::read_spill_record_input(std::as_bytes(std::span(data, size)));
    std::vector<std::byte> output(input.size % (max_buffer_bytes + 1));
    fuzz::MemoryFile stored(input.stored);
    try {
        fuzz::read_compressed(stored, input.codec, input.stored.size(), output);
    } catch (CorruptData const&) {
        return 0;  // the documented outcome of a payload that is not a valid stream
    }

    fuzz::MemoryFile recompressed;
    auto const stored_size = fuzz::write_compressed(recompressed, input.codec, output);
    std::vector<std::byte> again(output.size());
    fuzz::read_compressed(recompressed, input.codec, stored_size, again);
    if (again != output) {
        std::fprintf(stderr, "fuzz/spill_record: a decoded payload does not survive compressing again\n");
        std::abort();
    }
    return 0;
}
