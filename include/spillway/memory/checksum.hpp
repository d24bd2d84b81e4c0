#pragma once
/// @file
/// The checksum spillway puts on bytes that leave its hands: XXH3-64.

#include <cstddef>
#include <cstdint>
#include <span>

namespace spillway::memory {

/// XXH3-64 of `bytes`, with AVX2 or AVX-512 where the CPU and libxxhash have
/// them: what spill files, the collectives' messages and packed tables'
/// payloads are checked with.
std::uint64_t checksum(std::span<std::byte const> bytes) noexcept;

}  // namespace spillway::memory
