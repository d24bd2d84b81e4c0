#include <spillway/memory/host_admission.hpp>

namespace spillway::memory {

HostAdmission::HostAdmission(BufferResource& resource, std::size_t size)
    : resource_(resource),
      size_(size),
      freed_(resource.host_bytes_freed()),
      progressed_(std::chrono::steady_clock::now()) {
    resource.check_within_host_limit(size);
    count_waiting(true);
}

HostAdmission::~HostAdmission() {
    count_waiting(false);
}

MemoryReservation HostAdmission::try_reserve() {
    count_waiting(false);  // the attempt reserves the bytes itself
    auto [reservation, headroom] = resource_.reserve_spilling(size_);
    if (headroom.reached) {
        return std::move(reservation);
    }
    resource_.return_attempt(reservation);
    count_waiting(true);
    return {};
}

void HostAdmission::check_progress() {
    auto const freed = resource_.host_bytes_freed();
    auto const now = std::chrono::steady_clock::now();
    if (freed != freed_) {
        freed_ = freed;
        progressed_ = now;
        return;
    }
    if (now - progressed_ >= resource_.config().reserve_timeout) {
        resource_.fail_waiting(size_);
    }
}

void HostAdmission::count_waiting(bool waiting) noexcept {
    if (waiting == waiting_) {
        return;
    }
    waiting_ = waiting;
    MutexLock lock(resource_.accounting_mutex_);
    if (waiting) {
        resource_.host_waiting_ += size_;
    } else {
        resource_.host_waiting_ -= size_;
    }
}

}  // namespace spillway::memory
