#include "seq_join_tracer.hpp"

#include <spillway/core/trace.hpp>

namespace spillway::cli {

SeqJoinTracer::SeqJoinTracer(char const* name, std::size_t window, std::chrono::nanoseconds stall_timeout)
    : name_(name), stall_timeout_(stall_timeout), started_(window) {}

exec::SeqJoinOptions SeqJoinTracer::observe() {
    exec::SeqJoinOptions options;
    options.stall_timeout = stall_timeout_;
    if (trace::enabled()) {
        options.observer = [this](exec::ItemEvent const& event) {
            auto& started = started_[event.index % started_.size()];
            auto const now = std::chrono::steady_clock::now();
            if (event.phase == exec::ItemEvent::Phase::started) {
                started = now;
            } else {
                trace::record("seq_join", name_, started, now, 0, event.index);
            }
        };
    }
    return options;
}

}  // namespace spillway::cli
