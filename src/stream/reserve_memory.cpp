#include <spillway/stream/reserve_memory.hpp>

#include <algorithm>
#include <chrono>

#include <spillway/memory/host_admission.hpp>

namespace spillway::stream {
namespace {

/// The pause after the first attempt that found no room, and the longest:
/// short enough that a coroutine resumes soon after memory is freed, long
/// enough that a waiting coroutine costs next to nothing.
constexpr std::chrono::microseconds first_pause{50};
constexpr std::chrono::microseconds longest_pause{2000};

}  // namespace

exec::Task<memory::MemoryReservation> reserve_memory(
    memory::BufferResource& resource, exec::Executor& executor, std::size_t size
) {
    memory::HostAdmission admission(resource, size);
    auto pause = first_pause;
    while (true) {
        auto reservation = admission.try_reserve();
        if (reservation.size() == size) {
            co_return reservation;
        }
        admission.check_progress();
        co_await executor.sleep_for(pause);
        pause = std::min(pause * 2, longest_pause);
    }
}

}  // namespace spillway::stream
