#include "memory/aligned_allocation.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>

namespace spillway::memory::detail {

void AlignedFree::operator()(std::byte* bytes) const noexcept {
    std::free(bytes);  // NOLINT(cppcoreguidelines-no-malloc): pairs with posix_memalign
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
    bool const huge = capacity >= huge_page_bytes;
    void* memory = nullptr;
    // NOLINTNEXTLINE(cppcoreguidelines-no-malloc): freed by AlignedFree
    if (posix_memalign(&memory, huge ? huge_page_bytes : host_buffer_alignment, capacity) == 0 && huge) {
        // Only advice: where transparent huge pages are off this fails, harmlessly.
        madvise(memory, capacity, MADV_HUGEPAGE);
    }
    HostBytes bytes(static_cast<std::byte*>(memory));
    SPILLWAY_EXPECTS(
        bytes != nullptr,
        "allocating " << format_bytes(capacity) << " of HOST memory failed although "
                      << "memory_limit_host allows it; lower memory_limit_host",
        OutOfMemory
    );
    // Padding is written to spill files with direct I/O; zero it so that no
    // stale heap contents reach the disk.
    std::fill(bytes.get() + size, bytes.get() + capacity, std::byte{0});
    return bytes;
}

}  // namespace spillway::memory::detail
