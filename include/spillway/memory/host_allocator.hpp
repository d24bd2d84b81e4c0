#pragma once
/// @file
/// A standard allocator whose containers take their storage from a
/// `BufferResource`, and the resource that each thread's new containers
/// charge.

#include <cstddef>
#include <limits>
#include <new>
#include <type_traits>

namespace spillway::memory {

class BufferResource;

/// The resource that containers made on the calling thread charge: that of
/// the innermost live `ScopedHostResource` of this thread, or null (storage
/// from the C++ heap, counted nowhere).
[[nodiscard]] BufferResource* current_host_resource() noexcept;

/// Makes `resource` the calling thread's current HOST resource while it
/// lives, and restores the previous one when it is destroyed. Code that
/// builds tables for a rank (generating, partitioning, unpacking) runs inside
/// one, so that their column storage counts against the rank's HOST limit.
///
/// Thread safety: affects only the thread that made it, which must also
/// destroy it; scopes nest.
class ScopedHostResource {
  public:
    /// Makes `resource` (null: the C++ heap) current. Requires: it outlives
    /// every container made while it is current.
    explicit ScopedHostResource(BufferResource* resource) noexcept;
    ~ScopedHostResource();
    ScopedHostResource(ScopedHostResource const&) = delete;
    ScopedHostResource& operator=(ScopedHostResource const&) = delete;

  private:
    BufferResource* previous_;
};

namespace detail {
/// `BufferResource::allocate_bytes(size)` of `resource`, or `::operator new`
/// when it is null.
[[nodiscard]] void* allocate_bytes(BufferResource* resource, std::size_t size);
/// Frees what `allocate_bytes(resource, size)` returned.
void deallocate_bytes(BufferResource* resource, void* memory, std::size_t size) noexcept;
}  // namespace detail

/// An allocator (as the standard library defines one) over a
/// `BufferResource`: every allocation is HOST memory of that resource,
/// counted in its used bytes at the capacity it occupies, and every
/// deallocation returns it. With a null resource it is `std::allocator`.
///
/// A default-constructed allocator takes `current_host_resource()`, so a
/// container made on a thread inside a `ScopedHostResource` charges that
/// resource, and so does every copy or move of its storage it later makes.
/// A copy of a container charges the resource current where the copy is made;
/// assigning and swapping containers carry their allocators along.
///
/// Allocation makes room as `BufferResource::allocate_bytes` does: it may
/// spill, and it overbooks HOST rather than fail when nothing can be spilled.
///
/// Requires: the resource outlives every container that uses it; destroying
/// the resource first aborts, naming the bytes still in use.
///
/// Thread safety: copies may be used on any thread, concurrently.
template <typename T>
class HostAllocator {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "HostAllocator aligns to 16 bytes");

  public:
    using value_type = T;
    using propagate_on_container_copy_assignment = std::true_type;
    using propagate_on_container_move_assignment = std::true_type;
    using propagate_on_container_swap = std::true_type;
    using is_always_equal = std::false_type;

    /// An allocator for the calling thread's current resource.
    HostAllocator() noexcept : resource_(current_host_resource()) {}
    /// An allocator for `resource`; null means the C++ heap.
    explicit HostAllocator(BufferResource* resource) noexcept : resource_(resource) {}
    template <typename U>
    HostAllocator(HostAllocator<U> const& other) noexcept : resource_(other.resource()) {}

    /// Storage for `count` values.
    /// @throws std::bad_array_new_length if `count * sizeof(T)` overflows;
    ///         what `BufferResource::allocate_bytes` throws.
    [[nodiscard]] T* allocate(std::size_t count) {
        if (count > std::numeric_limits<std::size_t>::max() / sizeof(T)) {
            throw std::bad_array_new_length();
        }
        return static_cast<T*>(detail::allocate_bytes(resource_, count * sizeof(T)));
    }
    /// Frees storage that `allocate(count)` of an equal allocator returned.
    void deallocate(T* values, std::size_t count) noexcept {
        detail::deallocate_bytes(resource_, values, count * sizeof(T));
    }

    /// What a copy of a container uses: the resource current on the copying thread.
    [[nodiscard]] HostAllocator select_on_container_copy_construction() const noexcept { return {}; }

    /// The resource charged; null for the C++ heap.
    [[nodiscard]] BufferResource* resource() const noexcept { return resource_; }

    /// Allocators are equal when they charge the same resource.
    template <typename U>
    friend bool operator==(HostAllocator const& left, HostAllocator<U> const& right) noexcept {
        return left.resource() == right.resource();
    }

  private:
    BufferResource* resource_;
};

}  // namespace spillway::memory
