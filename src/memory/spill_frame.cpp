#include "memory/spill_frame.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include <spillway/core/error.hpp>

#ifdef SPILLWAY_HAVE_XXH_DISPATCH
// Turns this file's XXH3_64bits and XXH3_64bits_update into the library's
// dispatching versions, which hash with AVX2 or AVX-512 where the CPU has
// them, instead of SSE2: on the benchmark machine 28 to 32 GB/s against 15
// on buffers cold in memory. The hashes are the same, so spill files do not
// change.
#include <immintrin.h>
#include <xxh_x86dispatch.h>
#endif

namespace spillway::memory::detail {
namespace {

#ifdef SPILLWAY_HAVE_XXH_DISPATCH
/// `vzeroupper`; compiled for AVX, so callers must check that the CPU has it.
__attribute__((target("avx"))) void zero_upper_vector_halves() noexcept {
    _mm256_zeroupper();
}

/// Called after each dispatched hash. The library's AVX-512 code (libxxhash
/// 0.8.1) returns with the upper halves of the vector registers in use, and SSE
/// code after it, anywhere on the thread, then ran about four times slower
/// until something cleared them: in a test program, xxHash's inlined SSE2 code
/// (as table/ uses it) at 4 GB/s against 17, and in `spillway shuffle` the
/// verify phase a fifth slower. Where the CPU has no AVX, the library used SSE2
/// and there is nothing to clear.
void after_dispatched_hash() noexcept {
    static bool const has_avx = __builtin_cpu_supports("avx");
    if (has_avx) {
        zero_upper_vector_halves();
    }
}
#else
void after_dispatched_hash() noexcept {}
#endif

constexpr std::array<char, 8> magic{'S', 'P', 'I', 'L', 'L', 'W', 'A', 'Y'};
/// The header checksum covers every byte before it.
constexpr std::size_t header_checksum_offset = 56;

void put(std::span<std::byte> out, std::size_t offset, std::uint64_t value, std::size_t width) {
    for (std::size_t i = 0; i < width; ++i) {
        out[offset + i] = static_cast<std::byte>(value >> (8 * i));
    }
}

std::uint64_t get(std::span<std::byte const> in, std::size_t offset, std::size_t width) {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < width; ++i) {
        value |= std::to_integer<std::uint64_t>(in[offset + i]) << (8 * i);
    }
    return value;
}

}  // namespace

StreamingChecksum::StreamingChecksum() : state_(XXH3_createState()) {
    SPILLWAY_EXPECTS(state_ != nullptr, "cannot allocate a checksum state", OutOfMemory);
    XXH3_64bits_reset(state_.get());
}

StreamingChecksum::~StreamingChecksum() = default;

void StreamingChecksum::update(std::span<std::byte const> bytes) noexcept {
    XXH3_64bits_update(state_.get(), bytes.data(), bytes.size());
    after_dispatched_hash();
}

std::uint64_t StreamingChecksum::digest() const noexcept {
    return XXH3_64bits_digest(state_.get());
}

std::uint64_t checksum(std::span<std::byte const> bytes) noexcept {
    auto const hash = XXH3_64bits(bytes.data(), bytes.size());
    after_dispatched_hash();
    return hash;
}

void encode_frame_header(FrameHeader const& header, std::span<std::byte, frame_header_size> out) {
    std::ranges::fill(out, std::byte{0});
    std::memcpy(out.data(), magic.data(), magic.size());
    put(out, 8, frame_version, 2);
    put(out, 10, static_cast<std::uint64_t>(header.codec), 1);
    // byte 11: flags, zero in version 1
    put(out, 12, frame_header_size, 4);
    put(out, 16, header.size, 8);
    put(out, 24, header.stored_size, 8);
    put(out, 32, frame_payload_offset, 8);
    put(out, 40, header.payload_checksum, 8);
    // bytes 48..55: reserved, zero in version 1
    put(out, header_checksum_offset, checksum(out.first(header_checksum_offset)), 8);
}

FrameHeader decode_frame_header(
    std::span<std::byte const, frame_header_size> in, std::filesystem::path const& path
) {
    auto const corrupt = [&](auto const& what) {
        SPILLWAY_FAIL("spill file '" << path.string() << "' is corrupt: " << what, CorruptData);
    };
    if (std::memcmp(in.data(), magic.data(), magic.size()) != 0) {
        corrupt("it does not start with the spill-file magic");
    }
    if (get(in, header_checksum_offset, 8) != checksum(in.first(header_checksum_offset))) {
        corrupt("its header checksum does not match");
    }
    if (auto const version = get(in, 8, 2); version != frame_version) {
        corrupt("format version " + std::to_string(version) + ", this build reads version "
                + std::to_string(frame_version));
    }
    auto const codec = get(in, 10, 1);
    if (codec > static_cast<std::uint64_t>(Codec::zstd) || get(in, 11, 1) != 0
        || get(in, 12, 4) != frame_header_size || get(in, 32, 8) != frame_payload_offset)
    {
        corrupt("its header has an unknown codec, flag, size or payload offset");
    }
    return FrameHeader{
        .codec = static_cast<Codec>(codec),
        .size = get(in, 16, 8),
        .stored_size = get(in, 24, 8),
        .payload_checksum = get(in, 40, 8),
    };
}

}  // namespace spillway::memory::detail
