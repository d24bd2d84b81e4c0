#include <spillway/exec/semaphore.hpp>

namespace spillway::exec {

bool Semaphore::try_acquire() noexcept {
    MutexLock lock(mutex_);
    if (available_ == 0) {
        return false;
    }
    --available_;
    return true;
}

void Semaphore::release(std::size_t count) noexcept {
    MutexLock lock(mutex_);
    available_ += count;
    while (available_ > 0 && !waiters_.empty()) {
        --available_;
        waiters_.pop_front<Awaiter>().complete(lock);
    }
}

std::size_t Semaphore::available() const noexcept {
    MutexLock lock(mutex_);
    return available_;
}

bool Semaphore::Awaiter::await_suspend(std::coroutine_handle<> handle) {
    prepare(handle);
    MutexLock lock(semaphore_.mutex_);
    if (cancelled(lock)) {
        return false;
    }
    if (semaphore_.available_ > 0) {
        --semaphore_.available_;
        complete(lock);
        return false;
    }
    enqueue(lock, semaphore_.waiters_);
    return true;
}

}  // namespace spillway::exec
