#include <spillway/exec/event.hpp>

namespace spillway::exec {

void Event::set() noexcept {
    MutexLock lock(mutex_);
    set_ = true;
    while (!waiters_.empty()) {
        waiters_.pop_front<Awaiter>().complete(lock);
    }
}

bool Event::is_set() const noexcept {
    MutexLock lock(mutex_);
    return set_;
}

bool Event::Awaiter::await_suspend(std::coroutine_handle<> handle) {
    prepare(handle);
    MutexLock lock(event_.mutex_);
    if (cancelled(lock)) {
        return false;
    }
    if (event_.set_) {
        complete(lock);
        return false;
    }
    enqueue(lock, event_.waiters_);
    return true;
}

}  // namespace spillway::exec
