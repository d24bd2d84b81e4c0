#include "memory/spill_file_pool.hpp"

#include <algorithm>
#include <utility>

namespace spillway::memory::detail {

SpillFilePool::File SpillFilePool::new_file(std::filesystem::path path) {
    std::multimap<std::uint64_t, std::filesystem::path> one;
    return one.extract(one.emplace(0, std::move(path)));
}

SpillFilePool::File SpillFilePool::take(std::uint64_t bytes) {
    MutexLock lock(mutex_);
    auto const fitting = free_.lower_bound(bytes);
    return fitting == free_.end() ? File{} : free_.extract(fitting);
}

void SpillFilePool::add_in_use(File& file, std::uint64_t written) {
    auto const capacity = std::max(file.key(), written);
    MutexLock lock(mutex_);
    all_bytes_ += capacity - file.key();
    in_use_bytes_ += capacity;
    peak_in_use_bytes_ = std::max(peak_in_use_bytes_, in_use_bytes_);
    file.key() = capacity;
}

void SpillFilePool::release(File file) {
    MutexLock lock(mutex_);
    in_use_bytes_ -= file.key();
    free_.insert(std::move(file));
}

void SpillFilePool::forget(File const& file) {
    MutexLock lock(mutex_);
    all_bytes_ -= file.key();
}

SpillFilePool::File SpillFilePool::take_excess() {
    MutexLock lock(mutex_);
    return all_bytes_ <= peak_in_use_bytes_ ? File{} : take_smallest_free();
}

SpillFilePool::File SpillFilePool::take_free() {
    MutexLock lock(mutex_);
    return take_smallest_free();
}

SpillFilePool::File SpillFilePool::take_smallest_free() {
    if (free_.empty()) {
        return {};
    }
    auto smallest = free_.extract(free_.begin());
    all_bytes_ -= smallest.key();
    return smallest;
}

}  // namespace spillway::memory::detail
