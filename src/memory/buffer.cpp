#include <spillway/memory/buffer.hpp>

#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/memory/buffer_resource.hpp>

#include "memory/disk_tier.hpp"

namespace spillway::memory {

Buffer::Buffer(BufferResource& resource, std::size_t size, detail::HostBytes bytes) noexcept
    : resource_(&resource), mem_type_(MemoryType::HOST), size_(size), host_(std::move(bytes)) {}

Buffer::Buffer(
    BufferResource& resource, std::size_t size, std::unique_ptr<detail::SpillSlot> slot
) noexcept
    : resource_(&resource), mem_type_(MemoryType::DISK), size_(size), slot_(std::move(slot)) {}

Buffer::~Buffer() {
    release();
}

Buffer::Buffer(Buffer&& other) noexcept
    : resource_(std::exchange(other.resource_, nullptr)),
      mem_type_(other.mem_type_),
      size_(std::exchange(other.size_, 0)),
      host_(std::move(other.host_)),
      slot_(std::move(other.slot_)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
    if (this != &other) {
        release();
        resource_ = std::exchange(other.resource_, nullptr);
        mem_type_ = other.mem_type_;
        size_ = std::exchange(other.size_, 0);
        host_ = std::move(other.host_);
        slot_ = std::move(other.slot_);
    }
    return *this;
}

std::span<std::byte> Buffer::data() {
    check_host("data");
    return {host_.get(), size_};
}

std::span<std::byte const> Buffer::data() const {
    check_host("data");
    return {host_.get(), size_};
}

void Buffer::check_host(char const* what) const {
    SPILLWAY_EXPECTS(
        mem_type_ == MemoryType::HOST,
        "Buffer::" << what << "() needs a HOST buffer, this one is in " << mem_type_
            << "; move it to HOST with BufferResource::move first",
        InvalidArgument
    );
}

void Buffer::release() noexcept {
    slot_.reset();
    if (resource_ != nullptr) {
        resource_->release_buffer(mem_type_, size_, std::move(host_));
    }
    resource_ = nullptr;
    size_ = 0;
}

}  // namespace spillway::memory
