#pragma once
/// @file
/// The fixed-width fields the fuzz targets' input layouts are made of.

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <span>
#include <vector>

namespace spillway::fuzz {

/// Reads little-endian integers and byte runs from the front of a fuzz input
/// (every host spillway builds on is little-endian). Reading past the end
/// yields zeros and short runs, so that every input is some valid layout.
///
/// Thread safety: externally synchronized.
class ByteReader {
  public:
    explicit ByteReader(std::span<std::byte const> data) noexcept : rest_(data) {}

    /// The next `T`, zero-filled where the input ends.
    template <std::unsigned_integral T>
    [[nodiscard]] T take() noexcept {
        T value{};
        auto const bytes = take_bytes(sizeof(T));
        std::memcpy(&value, bytes.data(), bytes.size());
        return value;
    }

    /// The next `count` bytes, or as many as are left.
    [[nodiscard]] std::span<std::byte const> take_bytes(std::size_t count) noexcept {
        auto const taken = rest_.first(std::min(count, rest_.size()));
        rest_ = rest_.subspan(taken.size());
        return taken;
    }

    /// Everything not yet read.
    [[nodiscard]] std::span<std::byte const> rest() const noexcept { return rest_; }
    [[nodiscard]] bool empty() const noexcept { return rest_.empty(); }

  private:
    std::span<std::byte const> rest_;
};

/// Appends fields in the layout `ByteReader` reads: how the seed corpus is written.
///
/// Thread safety: externally synchronized.
class ByteWriter {
  public:
    template <std::unsigned_integral T>
    void put(T value) {
        put_bytes(std::as_bytes(std::span(&value, 1)));
    }
    void put_bytes(std::span<std::byte const> bytes) { bytes_.insert(bytes_.end(), bytes.begin(), bytes.end()); }

    [[nodiscard]] std::vector<std::byte> const& bytes() const noexcept { return bytes_; }

  private:
    std::vector<std::byte> bytes_;
};

}  // namespace spillway::fuzz
