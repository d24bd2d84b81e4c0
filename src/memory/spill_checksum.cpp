#include "memory/spill_checksum.hpp"

#include <spillway/core/error.hpp>

#ifdef SPILLWAY_HAVE_XXH_DISPATCH
// Turns this file's XXH3_64bits and XXH3_64bits_update into the library's
// dispatching versions, which hash with AVX2 or AVX-512 where the CPU has
// them, instead of SSE2: on the benchmark machine 28 to 32 GB/s against 15
// on buffers cold in memory. The hashes are the same.
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

}  // namespace

StreamingChecksum::StreamingChecksum() : state_(XXH3_createState()) {
    SPILLWAY_EXPECTS(state_ != nullptr, "cannot allocate a checksum state", OutOfMemory);
    reset();
}

StreamingChecksum::~StreamingChecksum() = default;

void StreamingChecksum::reset() noexcept {
    XXH3_64bits_reset(state_.get());
}

void StreamingChecksum::update(std::span<std::byte const> bytes) noexcept {
    XXH3_64bits_update(state_.get(), bytes.data(), bytes.size());
    after_dispatched_hash();
}

std::uint64_t StreamingChecksum::digest() const noexcept {
    return XXH3_64bits_digest(state_.get());
}

}  // namespace spillway::memory::detail

namespace spillway::memory {

std::uint64_t checksum(std::span<std::byte const> bytes) noexcept {
    auto const hash = XXH3_64bits(bytes.data(), bytes.size());
    detail::after_dispatched_hash();
    return hash;
}

}  // namespace spillway::memory
