#include <spillway/memory/bookkeeping_reservation.hpp>

#include <exception>

namespace spillway::memory {

void BookkeepingReservation::cover(std::size_t bytes) noexcept {
    auto const steps = bytes / step_bytes + (bytes % step_bytes == 0 ? 0 : 1);
    while (steps_.size() > (bytes == 0 ? 0 : steps + 1)) {
        steps_.pop_back();
    }
    try {
        while (steps_.size() < steps) {
            steps_.push_back(resource_->reserve(MemoryType::HOST, step_bytes, AllowOverbooking::yes));
        }
    } catch (std::exception const&) {
        // Short by a step or more until the next call; see the declaration.
    }
}

}  // namespace spillway::memory
