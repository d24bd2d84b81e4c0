#include "seq_join_tracer.hpp"

#include <spillway/core/trace.hpp>

namespace spillway::cli {

SeqJoinTracer::SeqJoinTracer(char const* name, std::size_t window) : name_(name), started_(window) {}

exec::SeqJoinOptions SeqJoinTracer::observe(exec::SeqJoinOptions options) {
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
