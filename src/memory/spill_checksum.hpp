#pragma once
/// @file
/// The checksum that protects spilled bytes: XXH3-64, whole or streamed.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include <xxhash.h>

#include <spillway/memory/checksum.hpp>

namespace spillway::memory::detail {

/// XXH3-64 of bytes given piece by piece.
///
/// Thread safety: externally synchronised.
class StreamingChecksum {
  public:
    StreamingChecksum();
    ~StreamingChecksum();
    StreamingChecksum(StreamingChecksum const&) = delete;
    StreamingChecksum& operator=(StreamingChecksum const&) = delete;

    /// Starts a new stream, forgetting what was added.
    void reset() noexcept;
    /// Adds `bytes` to the checksummed stream.
    void update(std::span<std::byte const> bytes) noexcept;
    /// The checksum of everything added so far.
    [[nodiscard]] std::uint64_t digest() const noexcept;

  private:
    struct FreeState {
        void operator()(XXH3_state_t* state) const noexcept { XXH3_freeState(state); }
    };
    std::unique_ptr<XXH3_state_t, FreeState> state_;
};

}  // namespace spillway::memory::detail
