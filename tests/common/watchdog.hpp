#pragma once
/// @file
/// Turns a hang into a failure: aborts the test program with a message if a
/// scope is not left before a deadline.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <spillway/core/mutex.hpp>

namespace spillway::test {

/// Aborts the process, naming `what`, unless destroyed within `limit`.
/// Use it around code whose bug would be a deadlock, so the test fails with a
/// message instead of waiting for ctest's timeout.
///
/// Thread safety: one owner; not movable.
class Watchdog {
  public:
    explicit Watchdog(std::string what, std::chrono::seconds limit = std::chrono::seconds(60))
        : what_(std::move(what)), thread_([this, limit] { watch(limit); }) {}
    ~Watchdog() {
        {
            MutexLock lock(mutex_);
            done_ = true;
        }
        changed_.notify_all();
        thread_.join();
    }
    Watchdog(Watchdog const&) = delete;
    Watchdog& operator=(Watchdog const&) = delete;

  private:
    void watch(std::chrono::seconds limit) {
        MutexLock lock(mutex_);
        if (!changed_.wait_for(lock, limit, [&]() SPILLWAY_REQUIRES(mutex_) { return done_; })) {
            std::fprintf(stderr, "watchdog: %s did not finish within %lld s (deadlock?)\n", what_.c_str(),
                         static_cast<long long>(limit.count()));
            std::abort();
        }
    }

    std::string const what_;
    Mutex mutex_;
    CondVar changed_;
    bool done_ SPILLWAY_GUARDED_BY(mutex_) = false;
    std::thread thread_;
};

}  // namespace spillway::test
