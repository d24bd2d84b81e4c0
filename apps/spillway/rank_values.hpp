#pragma once
/// @file
/// Small values that every rank of a job gives and every rank gets: results
/// to agree on, a path to share.

#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <spillway/memory/buffer_resource.hpp>
#include <spillway/shuffle/all_gather.hpp>

namespace spillway::cli {

/// Inserts `bytes` as this rank's one message into `gather`, ends this
/// rank's input, and returns every rank's message, in rank order. Every rank
/// calls it once on its part of the same all-gather, which is made with the
/// rank's buffer resource `resource` and into which nothing else is
/// inserted. Make the all-gather early, when the ranks may arrive far apart:
/// while it exists, the rank tells the others it is alive, so a slow rank
/// does not look like a stalled one.
/// @throws as `shuffle::AllGather` does (a rank that gave up, say).
[[nodiscard]] std::vector<std::vector<std::byte>> gather_bytes(shuffle::AllGather& gather,
                                                               memory::BufferResource& resource,
                                                               std::span<std::byte const> bytes);

/// Every rank's `value`, in rank order, as `gather_bytes` gathers them.
/// @throws CorruptData if a rank sent a value of another size.
template <class T>
    requires std::is_trivially_copyable_v<T>
[[nodiscard]] std::vector<T> gather_values(shuffle::AllGather& gather, memory::BufferResource& resource,
                                           T const& value);

/// Every rank's `text`, in rank order, as `gather_bytes` gathers them.
[[nodiscard]] std::vector<std::string> gather_strings(shuffle::AllGather& gather, memory::BufferResource& resource,
                                                      std::string const& text);

namespace detail {
/// @throws CorruptData naming both sizes unless `received == expected`.
void check_value_size(std::size_t received, std::size_t expected);
}  // namespace detail

template <class T>
    requires std::is_trivially_copyable_v<T>
std::vector<T> gather_values(shuffle::AllGather& gather, memory::BufferResource& resource, T const& value) {
    std::vector<T> values;
    for (auto const& bytes : gather_bytes(gather, resource, std::as_bytes(std::span(&value, 1)))) {
        detail::check_value_size(bytes.size(), sizeof(T));
        std::memcpy(&values.emplace_back(), bytes.data(), sizeof(T));
    }
    return values;
}

}  // namespace spillway::cli
