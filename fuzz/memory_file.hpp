#pragma once
/// @file
/// A spill file held in memory, and a compressed payload written to it and
/// read from it as the disk tier does: for the spill_record fuzz target and
/// the seed writer.

#include <sys/types.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <spillway/memory/codec.hpp>
#include <spillway/memory/file_operations.hpp>

#include "memory/aligned_allocation.hpp"
#include "memory/spill_codec.hpp"
#include "memory/spill_io.hpp"

namespace spillway::fuzz {

/// The one file a `memory::detail::OpenFile` over it reads and writes, kept
/// in memory: the seam the disk tier offers for its system calls, filled
/// with a fuzzer's bytes instead of a disk's. Descriptors are ignored.
///
/// Thread safety: externally synchronized.
class MemoryFile final : public memory::FileOperations {
  public:
    /// A descriptor to open an `OpenFile` with; any value would do.
    static constexpr int descriptor = 1'000'000;

    /// A file holding `bytes`, padded with zeros to the alignment as the disk
    /// tier pads its files.
    explicit MemoryFile(std::span<std::byte const> bytes = {}) : bytes_(bytes.begin(), bytes.end()) {
        bytes_.resize(memory::detail::align_up(bytes_.size()));
    }

    ssize_t pwrite(int, void const* data, std::size_t size, off_t offset) override {
        auto const at = static_cast<std::size_t>(offset);
        bytes_.resize(std::max(bytes_.size(), at + size));
        std::memcpy(bytes_.data() + at, data, size);
        return static_cast<ssize_t>(size);
    }
    ssize_t pread(int, void* data, std::size_t size, off_t offset) override {
        auto const at = std::min(static_cast<std::size_t>(offset), bytes_.size());
        auto const count = std::min(size, bytes_.size() - at);
        std::memcpy(data, bytes_.data() + at, count);
        return static_cast<ssize_t>(count);
    }
    int close(int) override { return 0; }

    [[nodiscard]] std::span<std::byte const> bytes() const noexcept { return bytes_; }

  private:
    std::vector<std::byte> bytes_;
};

/// The staging area of the codecs, made once.
inline std::span<std::byte> codec_staging() {
    static auto const bytes = memory::detail::allocate_aligned(memory::detail::codec_staging_bytes);
    return {bytes.get(), memory::detail::codec_staging_bytes};
}

/// Writes `bytes` compressed with `codec` (not `none`) from the start of
/// `file`; returns the stored size.
inline std::uint64_t write_compressed(MemoryFile& file, memory::Codec codec, std::span<std::byte const> bytes) {
    memory::detail::OpenFile out(file, "fuzz-spill-record", MemoryFile::descriptor, false);
    memory::detail::StagedWriter writer(out, codec_staging());
    writer.begin_payload();
    memory::detail::compress(codec, bytes, writer);
    auto const stored_size = writer.stored_size();
    writer.finish();
    return stored_size;
}

/// Decodes the `stored_size` bytes at the start of `file`, compressed with
/// `codec` (not `none`), into all of `output`.
/// @throws CorruptData as the disk tier's read does.
inline void read_compressed(
    MemoryFile& file, memory::Codec codec, std::uint64_t stored_size, std::span<std::byte> output
) {
    memory::detail::OpenFile in(file, "fuzz-spill-record", MemoryFile::descriptor, false);
    memory::detail::StagedReader reader(in, 0, stored_size, codec_staging());
    memory::detail::decompress(codec, reader, output, in.path());
}

}  // namespace spillway::fuzz
