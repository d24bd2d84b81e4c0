#pragma once
/// @file
/// `PollBackoff`: the pauses of a coroutine that polls for something nothing
/// can wake it for (memory freed, a collective complete).

#include <algorithm>
#include <chrono>

#include <spillway/exec/executor.hpp>
#include <spillway/exec/task.hpp>

namespace spillway::stream::detail {

/// Sleeps on an executor between polls that found nothing: 50 µs after the
/// first, doubling up to 2 ms. Short enough that the coroutine resumes soon
/// after what it waits for happens, long enough that it costs next to
/// nothing meanwhile.
///
/// Thread safety: owned by one coroutine.
class PollBackoff {
  public:
    /// Sleeps on `executor`, which must outlive it.
    explicit PollBackoff(exec::Executor& executor) noexcept : executor_(executor) {}

    /// `co_await backoff.pause()` after a poll that found nothing: sleeps,
    /// and makes the next pause twice as long, up to the longest.
    exec::Task<void> pause() {
        auto const sleep = pause_;
        pause_ = std::min(pause_ * 2, longest_pause);
        co_await executor_.sleep_for(sleep);
    }

    /// After a poll that found something: the next pause is the shortest.
    void reset() noexcept { pause_ = first_pause; }

  private:
    static constexpr std::chrono::microseconds first_pause{50};
    static constexpr std::chrono::microseconds longest_pause{2000};

    exec::Executor& executor_;
    std::chrono::microseconds pause_ = first_pause;
};

}  // namespace spillway::stream::detail
