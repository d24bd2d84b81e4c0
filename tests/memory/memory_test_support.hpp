#pragma once
/// @file
/// Helpers shared by the memory tests: configurations rooted in a temporary
/// directory, buffers of reproducible random bytes, spill-file and
/// statistics lookups.

#include <common/fault_injecting_file_operations.hpp>
#include <common/temporary_directory.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include <spillway/core/mutex.hpp>

#include <spillway/memory/buffer_resource.hpp>

namespace spillway::test {

inline constexpr std::uint64_t mebibyte = std::uint64_t{1} << 20;

/// A configuration whose spill directory is under `root`, with the given
/// HOST limit and no periodic spill thread (tests that want one set it).
inline memory::MemoryConfig test_config(TemporaryDirectory const& root, std::uint64_t host_limit = 64 * mebibyte) {
    memory::MemoryConfig config;
    config.spill_directory = root.path();
    config.host_limit = SizeSpec::bytes(host_limit);
    config.spill_interval = std::chrono::nanoseconds::zero();
    return config;
}

/// `test_config(root)` whose disk tier calls `operations`, so the test can
/// inject faults.
inline memory::MemoryConfig faulty_config(
    TemporaryDirectory const& root, std::shared_ptr<FaultInjectingFileOperations> operations
) {
    auto config = test_config(root);
    config.file_operations = std::move(operations);
    return config;
}

/// Expects every tier of `resource` to have nothing used or reserved.
inline void expect_all_tiers_at_zero(memory::BufferResource const& resource) {
    for (auto const tier : memory::memory_types) {
        EXPECT_EQ(resource.memory_used(tier), 0U) << tier;
        EXPECT_EQ(resource.memory_reserved(tier), 0U) << tier;
    }
}

/// A spill function registered for the lifetime of the object, so that a
/// failing assertion does not leave it registered when the resource goes.
class ScopedSpillFunction {
  public:
    ScopedSpillFunction(
        memory::BufferResource& resource, memory::SpillManager::SpillFunction function, int priority = 0,
        memory::SpillConcurrency concurrency = memory::SpillConcurrency::exclusive
    )
        : manager_(resource.spill_manager()),
          id_(manager_.add_spill_function(std::move(function), priority, concurrency)) {}
    ~ScopedSpillFunction() { manager_.remove_spill_function(id_); }
    ScopedSpillFunction(ScopedSpillFunction const&) = delete;
    ScopedSpillFunction& operator=(ScopedSpillFunction const&) = delete;

  private:
    memory::SpillManager& manager_;
    memory::SpillManager::SpillFunctionId const id_;
};

/// `size` reproducible bytes: random for `compressible == false`, else runs
/// of a few values that every codec shrinks.
inline std::vector<std::byte> test_bytes(std::size_t size, std::uint64_t seed, bool compressible = false) {
    std::mt19937_64 random(seed);
    std::vector<std::byte> bytes(size);
    for (std::size_t i = 0; i < size; ++i) {
        bytes[i] = compressible ? static_cast<std::byte>((i / 1000) % 4) : static_cast<std::byte>(random());
    }
    return bytes;
}

/// A HOST buffer of `size` uninitialised bytes of `resource`, reserved
/// without spilling, past the limit if `allow_overbooking` says so.
inline memory::Buffer host_buffer(
    memory::BufferResource& resource, std::size_t size,
    memory::AllowOverbooking allow_overbooking = memory::AllowOverbooking::no
) {
    auto reservation = resource.reserve(memory::MemoryType::HOST, size, allow_overbooking);
    return resource.make_buffer(size, reservation);
}

/// A HOST buffer of `resource` holding `bytes`, reserved without spilling.
inline memory::Buffer make_host_buffer(memory::BufferResource& resource, std::vector<std::byte> const& bytes) {
    auto buffer = host_buffer(resource, bytes.size());
    std::ranges::copy(bytes, buffer.data().begin());
    return buffer;
}

/// `buffer` moved to `tier`, reserving the bytes there; on failure `buffer`
/// is left as it was.
inline memory::Buffer move_to(memory::BufferResource& resource, memory::Buffer&& buffer, memory::MemoryType tier) {
    auto reservation = resource.reserve(tier, buffer.size(), memory::AllowOverbooking::no);
    return resource.move(std::move(buffer), reservation);
}

/// The bytes of a HOST buffer, copied.
inline std::vector<std::byte> contents(memory::Buffer const& buffer) {
    auto const data = buffer.data();
    return {data.begin(), data.end()};
}

/// HOST buffers of one size, held for a test, whose `spill` frees them one
/// by one: the simplest spill function that really frees HOST memory.
///
/// Thread safety: safe to use concurrently.
class BufferPile {
  public:
    /// `count` buffers of `size` bytes, reserved without spilling.
    BufferPile(memory::BufferResource& resource, std::size_t count, std::size_t size) {
        auto reservation = resource.reserve(memory::MemoryType::HOST, count * size, memory::AllowOverbooking::no);
        MutexLock lock(mutex_);
        for (std::size_t i = 0; i < count; ++i) {
            buffers_.push_back(resource.make_buffer(size, reservation));
        }
    }

    /// Frees buffers until `amount` bytes are freed or none is left; returns
    /// the bytes freed.
    std::size_t spill(std::size_t amount) {
        MutexLock lock(mutex_);
        std::size_t freed = 0;
        while (freed < amount && !buffers_.empty()) {
            freed += buffers_.back().size();
            buffers_.pop_back();
        }
        return freed;
    }

    /// The number of buffers still held.
    std::size_t count() {
        MutexLock lock(mutex_);
        return buffers_.size();
    }

  private:
    Mutex mutex_;
    std::vector<memory::Buffer> buffers_ SPILLWAY_GUARDED_BY(mutex_);
};

/// The total recorded under `name` in `resource`'s statistics; 0 if none.
inline double statistic(memory::BufferResource const& resource, std::string_view name) {
    auto const entry = resource.statistics().get(name);
    return entry ? entry->total : 0.0;
}

/// The spill files in `resource`'s spill directory.
inline std::vector<std::filesystem::path> spill_files(memory::BufferResource const& resource) {
    std::vector<std::filesystem::path> files;
    for (auto const& entry : std::filesystem::directory_iterator(resource.spill_directory())) {
        if (entry.path().filename().string().starts_with("buffer-")) {
            files.push_back(entry.path());
        }
    }
    return files;
}

}  // namespace spillway::test
