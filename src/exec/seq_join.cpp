#include <spillway/exec/seq_join_options.hpp>

#include <limits>
#include <sstream>

namespace spillway::exec {
namespace {

/// Writes `items` as `3, 4, 5`.
void write_items(std::ostringstream& out, std::vector<std::size_t> const& items) {
    for (std::size_t i = 0; i < items.size(); ++i) {
        out << (i == 0 ? "" : ", ") << items[i];
    }
}

}  // namespace

std::string StallReport::to_string() const {
    std::ostringstream out;
    out << "seq_join made no progress for "
        << std::chrono::duration_cast<std::chrono::milliseconds>(stalled_for).count()
        << " ms with a window of " << window << " items; the consumer waits for item " << next_to_consume;
    if (!running.empty()) {
        out << "; running: ";
        write_items(out, running);
    }
    if (!queued.empty()) {
        out << "; queued: ";
        write_items(out, queued);
    }
    out << ". An item that waits for an item " << window
        << " or more places after it can never finish: remove the dependency or widen the window";
    return out.str();
}

SeqJoinOptions SeqJoinOptions::from_options(Options const& options) {
    constexpr auto largest = std::numeric_limits<std::int32_t>::max();
    SeqJoinOptions result;
    result.grain = static_cast<std::size_t>(options.get_int("seq_join_grain", 1, 1, largest));
    result.prefetch = static_cast<std::size_t>(options.get_int("seq_join_prefetch", 0, 0, largest));
    result.stall_timeout = options.get_duration("seq_join_stall_timeout", std::chrono::nanoseconds::zero());
    return result;
}

}  // namespace spillway::exec
