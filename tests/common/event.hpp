#pragma once
/// @file
/// A one-shot event that threads wait for with a deadline, so that a test
/// that never sees it fails instead of hanging.

#include <chrono>

#include <spillway/core/mutex.hpp>

namespace spillway::test {

/// Set once; `wait` returns as soon as it is set or when the timeout passes.
///
/// Thread safety: safe to use concurrently.
class Event {
  public:
    /// Sets the event and wakes every waiter.
    void set() {
        {
            MutexLock lock(mutex_);
            set_ = true;
        }
        changed_.notify_all();
    }

    /// Whether the event was set within `timeout`.
    bool wait(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
        MutexLock lock(mutex_);
        return changed_.wait_for(lock, timeout, [&]() SPILLWAY_REQUIRES(mutex_) { return set_; });
    }

  private:
    Mutex mutex_;
    CondVar changed_;
    bool set_ SPILLWAY_GUARDED_BY(mutex_) = false;
};

}  // namespace spillway::test
