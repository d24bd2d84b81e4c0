#pragma once
/// @file
/// Mutexes annotated for clang's thread-safety analysis, their RAII holders,
/// and a condition variable that waits on a held `MutexLock`.
///
/// Use these instead of `std::mutex` wherever a field is guarded, so that
/// `SPILLWAY_GUARDED_BY` can be checked by the `clang-tsa` build.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#include <spillway/core/deadline.hpp>
#include <spillway/core/thread_annotations.hpp>

#if defined(__SANITIZE_THREAD__)
#define SPILLWAY_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SPILLWAY_TSAN 1
#endif
#endif
#if defined(SPILLWAY_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace spillway {

/// An exclusive, non-recursive mutex. Same guarantees as `std::mutex`.
class SPILLWAY_CAPABILITY("mutex") Mutex {
  public:
    Mutex() = default;
#if defined(SPILLWAY_TSAN)
    // std::mutex never calls pthread_mutex_destroy, so ThreadSanitizer would
    // keep this mutex's lock-order history for the next mutex at its address
    // (a stack slot reused by a later object) and report cycles between
    // unrelated objects.
    ~Mutex() { __tsan_mutex_destroy(mutex_.native_handle(), 0); }
#endif
    Mutex(Mutex const&) = delete;
    Mutex& operator=(Mutex const&) = delete;

    /// Blocks until the mutex is held by the caller.
    void lock() SPILLWAY_ACQUIRE() { mutex_.lock(); }
    /// Releases the mutex. Requires: the caller holds it.
    void unlock() SPILLWAY_RELEASE() { mutex_.unlock(); }
    /// Takes the mutex if it is free; returns whether it was taken.
    bool try_lock() SPILLWAY_TRY_ACQUIRE(true) { return mutex_.try_lock(); }

  private:
    friend class MutexLock;
    std::mutex mutex_;
};

/// Holds a `Mutex` for its lifetime (like `std::unique_lock`); can be waited
/// on with `CondVar`.
class SPILLWAY_SCOPED_CAPABILITY MutexLock {
  public:
    /// Blocks until `mutex` is held.
    explicit MutexLock(Mutex& mutex) SPILLWAY_ACQUIRE(mutex) : lock_(mutex.mutex_) {}
    /// Takes over `mutex`, which the caller holds (after `Mutex::try_lock`).
    MutexLock(Mutex& mutex, std::adopt_lock_t) SPILLWAY_REQUIRES(mutex) : lock_(mutex.mutex_, std::adopt_lock) {}
    ~MutexLock() SPILLWAY_RELEASE() = default;
    MutexLock(MutexLock const&) = delete;
    MutexLock& operator=(MutexLock const&) = delete;

  private:
    friend class CondVar;
    std::unique_lock<std::mutex> lock_;
};

/// A condition variable whose waits take the `MutexLock` that holds the
/// guarding mutex, so the analysis sees the lock held across the wait.
class CondVar {
  public:
    /// Wakes one waiter. Safe to call with or without the mutex held.
    void notify_one() noexcept { cv_.notify_one(); }
    /// Wakes every waiter. Safe to call with or without the mutex held.
    void notify_all() noexcept { cv_.notify_all(); }

    /// Releases the lock, waits until `done()` holds, and re-acquires it.
    /// `done` runs with the lock held.
    template <typename Predicate>
    void wait(MutexLock& lock, Predicate done) {
        cv_.wait(lock.lock_, std::move(done));
    }

    /// Like `wait`, but gives up after `timeout` (any length: one past the
    /// clock's range waits until `done()`); returns `done()`.
    template <typename Rep, typename Period, typename Predicate>
    bool wait_for(MutexLock& lock, std::chrono::duration<Rep, Period> timeout, Predicate done) {
        auto const longest = std::chrono::duration<long double, std::nano>(std::chrono::nanoseconds::max());
        auto const bounded = std::chrono::duration<long double, std::nano>(timeout) >= longest
                               ? std::chrono::nanoseconds::max()
                               : std::chrono::ceil<std::chrono::nanoseconds>(timeout);
        return cv_.wait_until(lock.lock_, deadline_after(std::chrono::steady_clock::now(), bounded), std::move(done));
    }

  private:
    std::condition_variable cv_;
};

/// A reader-writer mutex: many shared holders or one exclusive holder.
class SPILLWAY_CAPABILITY("mutex") SharedMutex {
  public:
    SharedMutex() = default;
    SharedMutex(SharedMutex const&) = delete;
    SharedMutex& operator=(SharedMutex const&) = delete;

    /// Blocks until the caller holds the mutex exclusively.
    void lock() SPILLWAY_ACQUIRE() { mutex_.lock(); }
    /// Releases exclusive ownership.
    void unlock() SPILLWAY_RELEASE() { mutex_.unlock(); }
    /// Blocks until the caller holds the mutex shared.
    void lock_shared() SPILLWAY_ACQUIRE_SHARED() { mutex_.lock_shared(); }
    /// Releases shared ownership.
    void unlock_shared() SPILLWAY_RELEASE_SHARED() { mutex_.unlock_shared(); }

  private:
    std::shared_mutex mutex_;
};

/// Holds a `SharedMutex` exclusively for its lifetime.
class SPILLWAY_SCOPED_CAPABILITY WriterLock {
  public:
    /// Blocks until `mutex` is held exclusively.
    explicit WriterLock(SharedMutex& mutex) SPILLWAY_ACQUIRE(mutex) : mutex_(mutex) {
        mutex_.lock();
    }
    ~WriterLock() SPILLWAY_RELEASE() { mutex_.unlock(); }
    WriterLock(WriterLock const&) = delete;
    WriterLock& operator=(WriterLock const&) = delete;

  private:
    SharedMutex& mutex_;
};

/// Holds a `SharedMutex` shared for its lifetime.
class SPILLWAY_SCOPED_CAPABILITY ReaderLock {
  public:
    /// Blocks until `mutex` is held shared.
    explicit ReaderLock(SharedMutex& mutex) SPILLWAY_ACQUIRE_SHARED(mutex) : mutex_(mutex) {
        mutex_.lock_shared();
    }
    ~ReaderLock() SPILLWAY_RELEASE() { mutex_.unlock_shared(); }
    ReaderLock(ReaderLock const&) = delete;
    ReaderLock& operator=(ReaderLock const&) = delete;

  private:
    SharedMutex& mutex_;
};

}  // namespace spillway
