#pragma once
/// @file
/// A deadline for a whole test body, so that a deadlock fails the test with
/// a message instead of hanging until ctest's timeout.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <spillway/core/mutex.hpp>

namespace spillway::test {

/// Aborts the process, naming `what`, unless it is destroyed within
/// `limit`. Use it where a bug would show up as a hang: a deadlock cannot
/// be turned into an ordinary failure, because the stuck threads cannot be
/// joined.
///
/// Thread safety: owned by one thread.
class Watchdog {
  public:
    explicit Watchdog(std::string what, std::chrono::seconds limit = std::chrono::seconds(120))
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
            std::fflush(stderr);
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
