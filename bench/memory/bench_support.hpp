#pragma once
/// @file
/// What the memory benchmarks share: METRIC output and medians
/// (`metric.hpp`), size arguments, a clock, and incompressible buffers.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <iostream>
#include <list>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/spillable_store.hpp>

#include "metric.hpp"

namespace spillway::bench {

/// Runs `body` as a benchmark's main: returns 0, or prints what it threw,
/// prefixed with `name`, and returns 1.
template <typename Body>
int guarded_main(std::string_view name, Body body) {
    try {
        body();
        return 0;
    } catch (std::exception const& error) {
        std::cerr << name << ": " << error.what() << "\n";
        return 1;
    }
}

/// The size given as argument `index` (`512MiB`, `2GiB`), or `fallback`.
/// @throws InvalidArgument if the argument is not a size.
inline std::uint64_t size_argument(int argc, char** argv, int index, std::uint64_t fallback) {
    return argc > index ? parse_bytes(argv[index], "size argument") : fallback;
}

/// Seconds since construction.
class Stopwatch {
  public:
    [[nodiscard]] double seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

  private:
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

/// Bytes made once and copied into buffers: random words no codec can
/// shrink, or, if `compressible`, words drawn from 16 values, which the codecs
/// shrink several times (so spilling them costs CPU more than disk).
class BenchBytes {
  public:
    explicit BenchBytes(std::size_t size, bool compressible = false) : words_((size + 7) / 8) {
        std::mt19937_64 random(42);
        std::ranges::generate(words_, [&] { return compressible ? random() % 16 : random(); });
    }

    /// A HOST buffer of `size` bytes (at most the construction size) holding
    /// these bytes, with `salt` in its first word so buffers differ.
    memory::Buffer make_buffer(memory::BufferResource& resource, std::size_t size, std::uint64_t salt) const {
        auto reservation = resource.reserve(memory::MemoryType::HOST, size, memory::AllowOverbooking::yes);
        auto buffer = resource.make_buffer(size, reservation);
        fill(buffer, salt);
        return buffer;
    }

    /// Copies these bytes into `buffer`, a HOST buffer of at most the
    /// construction size, with `salt` in its first word.
    void fill(memory::Buffer& buffer, std::uint64_t salt) const {
        auto const data = buffer.data();
        std::memcpy(data.data(), words_.data(), data.size());
        std::memcpy(data.data(), &salt, std::min(data.size(), sizeof salt));
    }

  private:
    std::vector<std::uint64_t> words_;
};

/// `count` stores of `resource`, holding `total` bytes between them in HOST
/// buffers of `buffer_size` made from `bytes`.
inline std::list<memory::SpillableStore> filled_stores(
    memory::BufferResource& resource, int count, std::uint64_t total, std::uint64_t buffer_size,
    BenchBytes const& bytes
) {
    std::list<memory::SpillableStore> stores;
    for (int s = 0; s < count; ++s) {
        auto& store = stores.emplace_back(resource, "bench");
        for (std::uint64_t offset = 0, key = 0; offset < total / count; offset += buffer_size, ++key) {
            store.insert(key, bytes.make_buffer(resource, buffer_size, key));
        }
    }
    return stores;
}

/// Writes `buffers` (HOST) one after another into the file at `path` with
/// O_DIRECT, one pwrite per buffer, the way a program would write them out
/// itself. A file already there is written over, not truncated, as the disk
/// tier writes over its freed spill files; the caller removes it. Returns the
/// seconds the writing took.
/// @throws IoError if a call fails.
inline double raw_write_seconds(std::filesystem::path const& path, std::span<memory::Buffer const> buffers) {
    Stopwatch const clock;
    int const fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_DIRECT, 0600);
    SPILLWAY_EXPECTS(fd >= 0, "cannot open " << path.string() << " with O_DIRECT", IoError);
    off_t offset = 0;
    for (auto const& buffer : buffers) {
        auto const data = buffer.data();
        auto const written = ::pwrite(fd, data.data(), data.size(), offset);
        SPILLWAY_EXPECTS(written == static_cast<ssize_t>(data.size()), "raw write to " << path.string() << " failed", IoError);
        offset += written;
    }
    SPILLWAY_EXPECTS(::close(fd) == 0, "closing " << path.string() << " failed", IoError);
    return clock.seconds();
}

}  // namespace spillway::bench
