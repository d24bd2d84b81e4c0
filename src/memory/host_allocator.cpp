#include <spillway/memory/host_allocator.hpp>

#include <utility>

#include <spillway/memory/buffer_resource.hpp>

namespace spillway::memory {
namespace {

/// The innermost live `ScopedHostResource`'s resource of this thread.
thread_local BufferResource* current_resource = nullptr;

}  // namespace

BufferResource* current_host_resource() noexcept { return current_resource; }

ScopedHostResource::ScopedHostResource(BufferResource* resource) noexcept
    : previous_(std::exchange(current_resource, resource)) {}

ScopedHostResource::~ScopedHostResource() { current_resource = previous_; }

namespace detail {

void* allocate_bytes(BufferResource* resource, std::size_t size) {
    return resource != nullptr ? resource->allocate_bytes(size) : ::operator new(size);
}

void deallocate_bytes(BufferResource* resource, void* memory, std::size_t size) noexcept {
    if (resource != nullptr) {
        resource->deallocate_bytes(memory, size);
    } else {
        ::operator delete(memory);
    }
}

}  // namespace detail
}  // namespace spillway::memory
