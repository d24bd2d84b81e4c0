#include "rank_values.hpp"

#include <algorithm>

#include <spillway/core/error.hpp>

namespace spillway::cli {

std::vector<std::vector<std::byte>> gather_bytes(shuffle::AllGather& gather, memory::BufferResource& resource,
                                                 std::span<std::byte const> bytes) {
    auto reservation = resource.reserve(memory::MemoryType::HOST, bytes.size(), memory::AllowOverbooking::yes);
    auto buffer = resource.make_buffer(bytes.size(), reservation);
    std::copy(bytes.begin(), bytes.end(), buffer.data().begin());
    gather.insert(0, shuffle::PackedData{{}, std::move(buffer)});
    gather.insert_finished();
    std::vector<std::vector<std::byte>> gathered;
    for (auto const& chunk : gather.wait_and_extract(shuffle::AllGather::Ordered::yes)) {
        auto const data = chunk.data.data();
        gathered.emplace_back(data.begin(), data.end());
    }
    return gathered;
}

std::vector<std::string> gather_strings(shuffle::AllGather& gather, memory::BufferResource& resource,
                                        std::string const& text) {
    std::vector<std::string> texts;
    for (auto const& bytes : gather_bytes(gather, resource, std::as_bytes(std::span(text)))) {
        auto& gathered = texts.emplace_back(bytes.size(), '\0');
        std::transform(bytes.begin(), bytes.end(), gathered.begin(),
                       [](std::byte byte) { return static_cast<char>(byte); });
    }
    return texts;
}

namespace detail {

void check_value_size(std::size_t received, std::size_t expected) {
    SPILLWAY_EXPECTS(received == expected, "a rank sent a value of " << received << " bytes, not " << expected,
                     CorruptData);
}

}  // namespace detail
}  // namespace spillway::cli
