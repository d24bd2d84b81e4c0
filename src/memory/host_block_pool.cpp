#include "memory/host_block_pool.hpp"

#include <algorithm>
#include <new>
#include <utility>

namespace spillway::memory::detail {

HostBytes HostBlockPool::take(std::size_t size, std::size_t capacity) noexcept {
    auto const found = blocks_.find(capacity);
    if (found == blocks_.end()) {
        return {};
    }
    auto block = std::move(blocks_.extract(found).mapped());
    bytes_ -= capacity;
    // Padding is written to spill files with direct I/O; zero what a larger
    // buffer may have left there.
    std::fill(block.get() + size, block.get() + capacity, std::byte{0});
    return block;
}

HostBytes HostBlockPool::give(HostBytes block, std::size_t capacity, std::uint64_t room) noexcept {
    if (capacity < min_block_bytes || bytes_ + capacity > room) {
        return block;
    }
    try {
        // The node is made empty first, so that `block` stays ours if that fails.
        blocks_.emplace(capacity, HostBytes())->second = std::move(block);
    } catch (std::bad_alloc const&) {
        return block;
    }
    bytes_ += capacity;
    return {};
}

HostBlockPool::Blocks HostBlockPool::trim(std::uint64_t room) noexcept {
    Blocks removed;
    while (bytes_ > room) {
        auto node = blocks_.extract(std::prev(blocks_.end()));
        bytes_ -= node.key();
        removed.insert(std::move(node));
    }
    return removed;
}

}  // namespace spillway::memory::detail
