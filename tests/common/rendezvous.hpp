#pragma once
/// @file
/// A barrier with a deadline, for tests that must prove two threads are
/// inside some region at the same time.

#include <chrono>
#include <cstddef>

#include <spillway/core/mutex.hpp>

namespace spillway::test {

/// Lets `parties` threads meet. `arrive_and_wait` returns true once all have
/// arrived, or false if `timeout` passes first, so a serialized
/// implementation makes the test fail instead of hang.
///
/// Thread safety: safe to use concurrently. Single use.
class Rendezvous {
  public:
    explicit Rendezvous(std::size_t parties) : parties_(parties) {}

    /// Counts the caller as arrived and waits for the others, up to `timeout`.
    /// Returns whether every party arrived in time.
    bool arrive_and_wait(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
        MutexLock lock(mutex_);
        ++arrived_;
        if (arrived_ >= parties_) {
            all_arrived_.notify_all();
            return true;
        }
        return all_arrived_.wait_for(lock, timeout, [&]() SPILLWAY_REQUIRES(mutex_) {
            return arrived_ >= parties_;
        });
    }

  private:
    std::size_t const parties_;
    Mutex mutex_;
    CondVar all_arrived_;
    std::size_t arrived_ SPILLWAY_GUARDED_BY(mutex_) = 0;
};

}  // namespace spillway::test
