#include <spillway/stream/reserve_memory.hpp>

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>
#include <spillway/memory/host_admission.hpp>
#include <spillway/stream/context.hpp>

#include "stream/poll_backoff.hpp"

namespace spillway::stream {

exec::Task<memory::MemoryReservation> reserve_memory(
    memory::BufferResource& resource, exec::Executor& executor, std::size_t size, std::stop_token stop
) {
    if (size == 0) {  // nothing to wait for, even over the limit
        co_return resource.try_reserve(memory::MemoryType::HOST, 0);
    }
    memory::HostAdmission admission(resource, size);
    detail::PollBackoff backoff(executor);
    while (true) {
        // Before an attempt, which may spill: an aborted pipeline neither
        // spills nor takes memory any more.
        SPILLWAY_EXPECTS(!stop.stop_requested(),
                         "stopped waiting for " << format_bytes(size) << " of HOST: the pipeline was aborted",
                         stream::PipelineAborted);
        auto reservation = admission.try_reserve();
        if (reservation.size() == size) {
            co_return reservation;
        }
        admission.check_progress();
        co_await backoff.pause();
    }
}

}  // namespace spillway::stream
