#include <spillway/exec/task_group.hpp>

#include <utility>

namespace spillway::exec {

TaskGroup::~TaskGroup() {
    request_stop();
    wait_for_all();
}

void TaskGroup::wait() {
    if (std::exception_ptr error = wait_for_all()) {
        std::rethrow_exception(error);
    }
}

std::exception_ptr TaskGroup::wait_for_all() noexcept {
    for (;;) {
        Notification finished;
        {
            MutexLock lock(mutex_);
            if (running_ == 0) {
                return std::exchange(error_, nullptr);
            }
            waiter_ = &finished;
        }
        executor_.wait(finished);
    }
}

void TaskGroup::fail(std::exception_ptr error) noexcept {
    {
        MutexLock lock(mutex_);
        if (!error_) {
            error_ = std::move(error);
        }
    }
    request_stop();
}

void TaskGroup::finish_one() noexcept {
    MutexLock lock(mutex_);
    if (--running_ == 0 && waiter_ != nullptr) {
        std::exchange(waiter_, nullptr)->notify();
    }
}

}  // namespace spillway::exec
