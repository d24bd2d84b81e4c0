#pragma once
/// @file
/// Deadlines that a delay of any length cannot overflow.

#include <chrono>

namespace spillway {

/// `now + delay`, or the clock's last instant where that would pass the
/// clock's range (a delay of `nanoseconds::max()`, meaning "never"); `now`
/// where `delay` is not positive.
[[nodiscard]] inline std::chrono::steady_clock::time_point deadline_after(std::chrono::steady_clock::time_point now,
                                                                          std::chrono::nanoseconds delay) noexcept {
    if (delay <= std::chrono::nanoseconds::zero()) {
        return now;
    }
    auto const last = std::chrono::steady_clock::time_point::max();
    return delay >= last - now ? last : now + delay;
}

}  // namespace spillway
