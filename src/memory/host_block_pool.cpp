#include "memory/host_block_pool.hpp"

#include <algorithm>
#include <new>
#include <utility>

#if __has_include(<sanitizer/asan_interface.h>)
#include <sanitizer/asan_interface.h>
#endif

namespace spillway::memory::detail {
namespace {

/// Under AddressSanitizer, marks a pooled block unaddressable, so that a use
/// of a freed buffer's bytes is still reported although the block is not
/// freed. Does nothing in other builds.
void poison([[maybe_unused]] std::byte* block, [[maybe_unused]] std::size_t capacity) noexcept {
#ifdef ASAN_POISON_MEMORY_REGION
    ASAN_POISON_MEMORY_REGION(block, capacity);
#endif
}

/// Undoes `poison` for a block that leaves the pool.
void unpoison([[maybe_unused]] std::byte* block, [[maybe_unused]] std::size_t capacity) noexcept {
#ifdef ASAN_UNPOISON_MEMORY_REGION
    ASAN_UNPOISON_MEMORY_REGION(block, capacity);
#endif
}

}  // namespace

HostBlockPool::~HostBlockPool() {
    static_cast<void>(trim(0));
}

HostBytes HostBlockPool::take(std::size_t capacity) noexcept {
    if (blocks_.empty()) {
        return {};
    }
    auto node = remove(nearest(capacity));
    auto block = std::move(node.mapped());
    auto& block_capacity = block.get_deleter().capacity;
    if (block_capacity >= capacity + min_block_bytes) {
        // The pages of a mapping can be unmapped apart: the tail stays
        // pooled as a block of its own, in the node the block leaves.
        node.key() = block_capacity - capacity;
        node.mapped() = HostBytes(block.get() + capacity, AlignedFree{node.key()});
        block_capacity = capacity;
        poison(node.mapped().get(), node.key());
        bytes_ += node.key();
        blocks_.insert(std::move(node));
    }
    return block;
}

bool HostBlockPool::fit(HostBytes& block, std::size_t size, std::size_t capacity) noexcept {
    if (block.get_deleter().capacity != capacity) {
        if (!reshape_mapped_block(block, capacity)) {
            return false;
        }
        unpoison(block.get(), capacity);  // pages it gained, perhaps at a new address
    }
    // Padding is written to spill files with direct I/O; zero what a larger
    // buffer may have left there.
    std::fill(block.get() + size, block.get() + capacity, std::byte{0});
    return true;
}

HostBytes HostBlockPool::give(HostBytes block, std::size_t capacity, std::uint64_t room) noexcept {
    if (capacity < min_block_bytes || bytes_ + capacity > room) {
        return block;
    }
    try {
        // The node is made empty first, so that `block` stays ours if that fails.
        auto const pooled = blocks_.emplace(capacity, HostBytes());
        pooled->second = std::move(block);
        poison(pooled->second.get(), capacity);
    } catch (std::bad_alloc const&) {
        return block;
    }
    bytes_ += capacity;
    return {};
}

HostBlockPool::Blocks HostBlockPool::trim(std::uint64_t room) noexcept {
    Blocks removed;
    while (bytes_ > room) {
        removed.insert(remove(nearest(bytes_ - room)));
    }
    return removed;
}

HostBlockPool::Blocks::iterator HostBlockPool::nearest(std::uint64_t bytes) noexcept {
    auto const found = blocks_.lower_bound(bytes);
    return found != blocks_.end() ? found : std::prev(found);
}

HostBlockPool::Blocks::node_type HostBlockPool::remove(Blocks::iterator block) noexcept {
    auto node = blocks_.extract(block);
    bytes_ -= node.key();
    unpoison(node.mapped().get(), node.key());
    return node;
}

}  // namespace spillway::memory::detail
