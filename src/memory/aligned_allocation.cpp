#include "memory/aligned_allocation.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <spillway/core/error.hpp>
#include <spillway/core/mutex.hpp>
#include <spillway/core/options.hpp>

namespace spillway::memory::detail {

namespace {

/// `capacity` bytes mapped on their own, aligned to `alignment` (a multiple
/// of the page size); null if the system has no memory for them.
std::byte* map_aligned(std::size_t capacity, std::size_t alignment) noexcept {
    auto const mapped_size = capacity + alignment - host_buffer_alignment;
    void* mapped = mmap(nullptr, mapped_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) {
        return nullptr;
    }
    auto const start = reinterpret_cast<std::uintptr_t>(mapped);
    auto const aligned = (start + alignment - 1) / alignment * alignment;
    auto const end = start + mapped_size;
    if (aligned > start) {
        munmap(mapped, aligned - start);
    }
    if (end > aligned + capacity) {
        munmap(reinterpret_cast<void*>(aligned + capacity), end - aligned - capacity);
    }
    return reinterpret_cast<std::byte*>(aligned);
}

/// @throws OutOfMemory naming `capacity` if `bytes` is null.
void expect_allocated(HostBytes const& bytes, std::size_t capacity) {
    SPILLWAY_EXPECTS(
        bytes != nullptr,
        "allocating " << format_bytes(capacity) << " of HOST memory failed although "
                      << "memory_limit_host allows it; lower memory_limit_host",
        OutOfMemory
    );
}

}  // namespace

void AlignedFree::operator()(std::byte* bytes) const noexcept {
    if (capacity >= min_mapped_bytes) {
        munmap(bytes, capacity);
    } else {
        std::free(bytes);  // NOLINT(cppcoreguidelines-no-malloc): pairs with posix_memalign and malloc
    }
}

HostBytes allocate_block(std::size_t size) {
    if (size == 0 || is_mapped_block(size)) {
        return allocate_aligned(size);
    }
    // NOLINTNEXTLINE(cppcoreguidelines-no-malloc): freed by AlignedFree
    HostBytes bytes(static_cast<std::byte*>(std::malloc(malloc_request(size))), AlignedFree{block_capacity(size)});
    expect_allocated(bytes, block_capacity(size));
    return bytes;
}

void shrink_block(HostBytes& bytes, std::size_t old_size, std::size_t size) {
    if (is_mapped_block(size)) {  // so was the block: `size <= old_size`
        auto const kept = static_cast<std::size_t>(align_up(size));
        // The padding up to `kept` goes to disk with the buffer: zeros, as
        // for every block.
        std::fill(bytes.get() + size, bytes.get() + kept, std::byte{0});
        static_cast<void>(reshape_mapped_block(bytes, kept));  // else the tail stays mapped, counted as the block's
        return;
    }
    if (!is_mapped_block(old_size) && size > 0) {
        // NOLINTNEXTLINE(cppcoreguidelines-no-malloc): the block is from malloc
        auto* const shrunk = static_cast<std::byte*>(std::realloc(bytes.get(), malloc_request(size)));
        SPILLWAY_EXPECTS(shrunk != nullptr, "shortening a HOST block to " << format_bytes(size) << " failed",
                         OutOfMemory);
        static_cast<void>(bytes.release());  // realloc took it over
        bytes = HostBytes(shrunk, AlignedFree{block_capacity(size)});
        return;
    }
    auto copy = allocate_block(size);
    if (size > 0) {
        std::memcpy(copy.get(), bytes.get(), size);
    }
    bytes = std::move(copy);
}

bool reshape_mapped_block(HostBytes& block, std::size_t capacity) noexcept {
    auto& old_capacity = block.get_deleter().capacity;
    if (capacity < old_capacity) {
        if (munmap(block.get() + capacity, old_capacity - capacity) != 0) {
            return false;
        }
    } else if (capacity > old_capacity) {
#if defined(SPILLWAY_TSAN)
        // ThreadSanitizer does not intercept `mremap`: the pages a block
        // left and those it moved to kept the accesses it recorded there,
        // and later buffers at those addresses raced with them. Under it a
        // block grows into a new mapping and a copy, which it sees.
        auto* const grown = map_aligned(capacity, host_buffer_alignment);
        if (grown == nullptr) {
            return false;
        }
        std::memcpy(grown, block.get(), old_capacity);
        block = HostBytes(grown, AlignedFree{old_capacity});
#else
        void* moved = mremap(block.get(), old_capacity, capacity, MREMAP_MAYMOVE);
        if (moved == MAP_FAILED) {
            return false;
        }
        static_cast<void>(block.release());  // mremap took it over
        block = HostBytes(static_cast<std::byte*>(moved), AlignedFree{old_capacity});
#endif
    }
    block.get_deleter().capacity = capacity;
    return true;
}

std::size_t aligned_capacity(std::size_t size) {
    SPILLWAY_EXPECTS(
        size <= max_aligned_size,
        "cannot allocate " << format_bytes(size) << " (" << size << " bytes) of HOST memory: no "
                           << "allocation can be larger than " << format_bytes(max_aligned_size),
        OutOfMemory
    );
    return align_up(size);
}

HostBytes allocate_aligned(std::size_t size) {
    auto const capacity = aligned_capacity(size);
    if (capacity == 0) {
        return {};
    }
    std::byte* memory = nullptr;
    if (capacity >= huge_page_bytes) {
        memory = map_aligned(capacity, huge_page_bytes);
        if (memory != nullptr) {
            // Only advice: where transparent huge pages are off this fails, harmlessly.
            madvise(memory, capacity, MADV_HUGEPAGE);
        }
    } else if (capacity >= min_mapped_bytes) {
        memory = map_aligned(capacity, host_buffer_alignment);
    } else {
        void* allocated = nullptr;
        // NOLINTNEXTLINE(cppcoreguidelines-no-malloc): freed by AlignedFree
        if (posix_memalign(&allocated, host_buffer_alignment, capacity) == 0) {
            memory = static_cast<std::byte*>(allocated);
        }
    }
    HostBytes bytes(memory, AlignedFree{capacity});
    expect_allocated(bytes, capacity);
    // Padding is written to spill files with direct I/O; zero it so that no
    // stale heap contents reach the disk (mapped pages come zeroed).
    if (capacity < min_mapped_bytes) {
        std::fill(bytes.get() + size, bytes.get() + capacity, std::byte{0});
    }
    return bytes;
}

}  // namespace spillway::memory::detail
