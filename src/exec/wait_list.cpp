#include <spillway/exec/detail/wait_list.hpp>

namespace spillway::exec::detail {

void Waiter::prepare(std::coroutine_handle<> handle) {
    handle_ = handle;
    if (stop_.stop_possible()) {
        // Runs Cancel right here if stop was already requested; it finds the
        // waiter preparing and marks it cancelled.
        on_stop_.emplace(stop_, Cancel{this});
    }
}

bool Waiter::cancelled(MutexLock const&) const noexcept { return state_ == State::cancelled; }

void Waiter::enqueue(MutexLock const&, WaitList& list) noexcept {
    state_ = State::waiting;
    list.push_back(*this);
}

void Waiter::complete(MutexLock const&) noexcept {
    bool const suspended = state_ == State::waiting;
    state_ = State::completed;
    if (suspended) {
        executor_.post(*this);
    }
}

bool Waiter::finish() noexcept {
    // Waits for a Cancel running on another thread; it changes nothing once
    // the wait has completed.
    on_stop_.reset();
    return state_ == State::cancelled;
}

void Waiter::Cancel::operator()() const noexcept {
    MutexLock lock(waiter->mutex_);
    switch (waiter->state_) {
    case State::preparing:
        waiter->state_ = State::cancelled;
        break;
    case State::waiting: {
        WaitList& list = *waiter->list_;
        list.remove(*waiter);
        waiter->state_ = State::cancelled;
        waiter->executor_.post(*waiter);
        if (list.after_cancel_) {
            list.after_cancel_(lock);
        }
        break;
    }
    case State::completed:
    case State::cancelled:
        break;
    }
}

void WaitList::push_back(Waiter& waiter) noexcept {
    waiter.list_ = this;
    waiter.previous_ = tail_;
    waiter.next_ = nullptr;
    if (tail_ != nullptr) {
        tail_->next_ = &waiter;
    } else {
        head_ = &waiter;
    }
    tail_ = &waiter;
}

void WaitList::remove(Waiter& waiter) noexcept {
    if (waiter.previous_ != nullptr) {
        waiter.previous_->next_ = waiter.next_;
    } else {
        head_ = waiter.next_;
    }
    if (waiter.next_ != nullptr) {
        waiter.next_->previous_ = waiter.previous_;
    } else {
        tail_ = waiter.previous_;
    }
    waiter.list_ = nullptr;
    waiter.previous_ = nullptr;
    waiter.next_ = nullptr;
}

}  // namespace spillway::exec::detail
