#pragma once
/// @file
/// The byte storage of a column: a vector that does not zero what it grows by.

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include <spillway/memory/host_allocator.hpp>

namespace spillway::table {
namespace detail {

/// A `memory::HostAllocator` whose value-less `construct` default-initializes,
/// so `resize` on a vector of bytes leaves the new bytes unwritten instead of
/// zeroing them: builders and gathers overwrite every byte anyway.
template <typename T>
class UninitializedAllocator : public memory::HostAllocator<T> {
  public:
    using value_type = T;

    /// An allocator for the calling thread's current HOST resource.
    UninitializedAllocator() noexcept = default;
    template <typename U>
    UninitializedAllocator(UninitializedAllocator<U> const& other) noexcept
        : memory::HostAllocator<T>(other.resource()) {}

    /// What a copy of a column's buffer uses: the copying thread's current resource.
    [[nodiscard]] UninitializedAllocator select_on_container_copy_construction() const noexcept { return {}; }

    /// Default-initializes: leaves trivial types unwritten.
    template <typename U>
    void construct(U* pointer) noexcept(std::is_nothrow_default_constructible_v<U>) {
        ::new (static_cast<void*>(pointer)) U;
    }
    /// Constructs from `arguments`, as `std::allocator` would.
    template <typename U, typename... Arguments>
    void construct(U* pointer, Arguments&&... arguments) {
        ::new (static_cast<void*>(pointer)) U(std::forward<Arguments>(arguments)...);
    }
};

}  // namespace detail

/// Bytes a column owns: a validity bitmap, values or offsets, or characters.
/// Its data is aligned for any of the types a column stores
/// (`__STDCPP_DEFAULT_NEW_ALIGNMENT__`, 16 on x86-64). Growing it leaves the
/// new bytes unwritten. Its storage comes from the HOST resource current on
/// the thread that made it (`memory::ScopedHostResource`), or from the C++
/// heap outside any.
using ColumnBuffer = std::vector<std::byte, detail::UninitializedAllocator<std::byte>>;

}  // namespace spillway::table
