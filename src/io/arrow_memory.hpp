#pragma once
/// @file
/// The memory the Arrow library allocates for spillway's readers and writers.

#include <arrow/memory_pool.h>

namespace spillway::io::detail {

/// The pool every Arrow and Parquet reader and writer of spillway allocates
/// from: the Arrow library's jemalloc, set to return freed pages to the
/// system within about `freed_pages_kept_ms`, where the library has it; its
/// system allocator otherwise. The first call sets that decay for every user
/// of the library's jemalloc in the process (pyarrow's too, where chosen).
///
/// Thread safety: safe to call from any thread; the pool is made once.
[[nodiscard]] arrow::MemoryPool* arrow_memory_pool();

/// How long jemalloc keeps freed pages before it returns them, in ms.
inline constexpr int freed_pages_kept_ms = 100;

}  // namespace spillway::io::detail
