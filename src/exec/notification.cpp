#include <spillway/exec/notification.hpp>

namespace spillway::exec {

void Notification::notify() noexcept {
    // The store and the wake-up happen under the mutex, and every waiter
    // returns only after taking the mutex: once a waiter has seen the flag,
    // notify() no longer touches the object, so the waiter may destroy it.
    MutexLock lock(mutex_);
    // release: pairs with the acquire load in has_been_notified().
    notified_.store(true, std::memory_order_release);
    changed_.notify_all();
}

void Notification::wait() noexcept {
    MutexLock lock(mutex_);
    // relaxed: notify() stores under the mutex we hold.
    changed_.wait(lock, [&] { return notified_.load(std::memory_order_relaxed); });
}

bool Notification::wait_or_wake() noexcept {
    MutexLock lock(mutex_);
    changed_.wait(lock, [&]() SPILLWAY_REQUIRES(mutex_) {
        // relaxed: notify() stores under the mutex we hold.
        return woken_ || notified_.load(std::memory_order_relaxed);
    });
    woken_ = false;
    return notified_.load(std::memory_order_relaxed);
}

void Notification::reset() noexcept {
    MutexLock lock(mutex_);
    // relaxed: the caller guarantees nobody else uses the object now.
    notified_.store(false, std::memory_order_relaxed);
    woken_ = false;
}

void Notification::wake() noexcept {
    MutexLock lock(mutex_);
    woken_ = true;
    changed_.notify_all();
}

}  // namespace spillway::exec
