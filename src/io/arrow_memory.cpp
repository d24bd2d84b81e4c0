#include "arrow_memory.hpp"

namespace spillway::io::detail {

// Not glibc's heap: many Parquet writers free blocks of many sizes between
// live ones, and that heap then grows with the rows written
// (docs/architecture.md, "Arrow's memory").
arrow::MemoryPool* arrow_memory_pool() {
    static arrow::MemoryPool* const pool = [] {
        arrow::MemoryPool* jemalloc = nullptr;
        if (arrow::jemalloc_memory_pool(&jemalloc).ok()
            && arrow::jemalloc_set_decay_ms(freed_pages_kept_ms).ok()) {
            return jemalloc;
        }
        return arrow::system_memory_pool();
    }();
    return pool;
}

}  // namespace spillway::io::detail
