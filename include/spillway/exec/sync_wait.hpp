#pragma once
/// @file
/// `sync_wait`: runs a `Task` to completion from code that is not a coroutine.

#include <type_traits>

#include <spillway/exec/detail/detached.hpp>
#include <spillway/exec/detail/result_slot.hpp>
#include <spillway/exec/executor.hpp>
#include <spillway/exec/notification.hpp>
#include <spillway/exec/task.hpp>

namespace spillway::exec {
namespace detail {

/// Sets a notification when a detached coroutine has finished.
struct NotifyWhenDone {
    Notification* finished;
    void operator()() const noexcept { finished->notify(); }
};

/// Awaits `task` and leaves its outcome in `slot`.
template <typename T>
Detached<NotifyWhenDone> await_into(Task<T>& task, ResultSlot<T>& slot) {
    try {
        if constexpr (std::is_void_v<T>) {
            co_await task;
        } else {
            slot.value.emplace(co_await task);
        }
    } catch (...) {
        slot.error = std::current_exception();
    }
}

template <typename T>
T sync_wait_on(Executor* executor, Task<T> task) {
    Notification finished;
    ResultSlot<T> slot;
    await_into(task, slot).start(NotifyWhenDone{&finished});
    if (executor != nullptr) {
        executor->wait(finished);
    } else {
        finished.wait();
    }
    return slot.take();
}

}  // namespace detail

/// Starts `task` on the calling thread and blocks until it has finished,
/// running `executor`'s queued work meanwhile (so it is safe to call on one
/// of `executor`'s own threads). Returns the task's value.
/// @throws whatever the task threw.
template <typename T>
T sync_wait(Executor& executor, Task<T> task) {
    return detail::sync_wait_on(&executor, std::move(task));
}

/// Like `sync_wait(executor, task)` with the executor whose work the calling
/// thread runs (`Executor::current()`); a thread outside every executor just
/// blocks.
/// @throws whatever the task threw.
template <typename T>
T sync_wait(Task<T> task) {
    return detail::sync_wait_on(Executor::current(), std::move(task));
}

}  // namespace spillway::exec
