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

#include <spillway/comm/communicator.hpp>
#include <spillway/shuffle/op_id.hpp>
#include <spillway/shuffle/shuffle_config.hpp>

namespace spillway::cli {

/// Every rank's `bytes`, in rank order: one `shuffle::AllGather` (op
/// `op_id`, configured by `config`) of one message per rank. Every rank of
/// `communicator` calls it with the same op id, which no other collective
/// of theirs uses at the same time.
/// @throws as `shuffle::AllGather` does (a rank that gave up, say).
[[nodiscard]] std::vector<std::vector<std::byte>> gather_bytes(comm::Communicator& communicator,
                                                               shuffle::OpId op_id, std::span<std::byte const> bytes,
                                                               shuffle::ShuffleConfig const& config);

/// Every rank's `value`, in rank order, as `gather_bytes` gathers them.
/// @throws CorruptData if a rank sent a value of another size.
template <class T>
    requires std::is_trivially_copyable_v<T>
[[nodiscard]] std::vector<T> gather_values(comm::Communicator& communicator, shuffle::OpId op_id, T const& value,
                                           shuffle::ShuffleConfig const& config);

/// Every rank's `text`, in rank order, as `gather_bytes` gathers them.
[[nodiscard]] std::vector<std::string> gather_strings(comm::Communicator& communicator, shuffle::OpId op_id,
                                                      std::string const& text, shuffle::ShuffleConfig const& config);

namespace detail {
/// @throws CorruptData naming both sizes unless `received == expected`.
void check_value_size(std::size_t received, std::size_t expected);
}  // namespace detail

template <class T>
    requires std::is_trivially_copyable_v<T>
std::vector<T> gather_values(comm::Communicator& communicator, shuffle::OpId op_id, T const& value,
                             shuffle::ShuffleConfig const& config) {
    std::vector<T> values;
    for (auto const& bytes : gather_bytes(communicator, op_id, std::as_bytes(std::span(&value, 1)), config)) {
        detail::check_value_size(bytes.size(), sizeof(T));
        std::memcpy(&values.emplace_back(), bytes.data(), sizeof(T));
    }
    return values;
}

}  // namespace spillway::cli
