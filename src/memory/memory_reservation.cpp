#include <spillway/memory/memory_reservation.hpp>

#include <utility>

#include <spillway/memory/buffer_resource.hpp>

namespace spillway::memory {

MemoryReservation::~MemoryReservation() {
    release();
}

MemoryReservation::MemoryReservation(MemoryReservation&& other) noexcept
    : resource_(std::exchange(other.resource_, nullptr)),
      mem_type_(other.mem_type_),
      size_(std::exchange(other.size_, 0)) {}

MemoryReservation& MemoryReservation::operator=(MemoryReservation&& other) noexcept {
    if (this != &other) {
        release();
        resource_ = std::exchange(other.resource_, nullptr);
        mem_type_ = other.mem_type_;
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

void MemoryReservation::release() noexcept {
    if (resource_ != nullptr && size_ > 0) {
        resource_->release_reservation(mem_type_, size_);
    }
    size_ = 0;
}

}  // namespace spillway::memory
