#pragma once
/// @file
/// `Channel<T>`: a bounded FIFO queue between coroutines, with backpressure.

#include <coroutine>
#include <cstddef>
#include <deque>
#include <functional>
#include <limits>
#include <new>
#include <optional>
#include <stop_token>
#include <utility>

#include <spillway/core/error.hpp>
#include <spillway/core/mutex.hpp>
#include <spillway/exec/detail/wait_list.hpp>
#include <spillway/exec/executor.hpp>

namespace spillway::exec {

/// A bounded multi-producer, multi-consumer queue. `co_await send(v)`
/// suspends while the channel holds `capacity` values, or, for a channel
/// made with a weight bound, while `v` would take the weight of the values
/// it holds past that bound (backpressure); `co_await receive()` suspends
/// while it is empty. A value heavier than the bound alone goes in once the
/// channel is empty, so no value waits forever. Values come out in the order
/// they went in, and waiting senders and receivers are served in FIFO order:
/// a send never overtakes a waiting one, even if its value would fit.
///
/// `close()` ends the channel: every waiting sender wakes with false (its
/// value is dropped), later sends fail at once, and receivers drain what is
/// buffered and then get `std::nullopt`. Waiters resume on the executor
/// given at construction, never inside `send`, `receive` or `close`. A send
/// or receive given a stop token ends early when stop is requested (a send
/// then drops its value), and at once if it was requested before the call,
/// even if there is room or a value: a stopped consumer takes no more.
///
/// Thread safety: every member function may be called concurrently.
/// Requires: no coroutine is waiting when the channel is destroyed.
template <typename T>
class Channel {
  public:
    /// A channel that buffers up to `capacity` values and resumes waiters on
    /// `executor`, which must outlive it.
    /// @throws InvalidArgument if `capacity` is 0.
    Channel(Executor& executor, std::size_t capacity)
        : Channel(executor, capacity, std::numeric_limits<std::size_t>::max(), [](T const&) { return 0; }) {}

    /// A channel that buffers up to `capacity` values whose weights
    /// (`weigh(value)`, such as their bytes) add up to at most `max_weight`,
    /// and resumes waiters on `executor`, which must outlive it. `weigh`
    /// must give a value the same weight each time it is called; it runs
    /// under the channel's lock, so it must be cheap and must not use the
    /// channel, and must not throw for a value it weighed once (it weighs a
    /// waiting sender's value again when there may be room for it, in a
    /// receive or when a stop request ends the wait of a send before it).
    /// @throws InvalidArgument if `capacity` or `max_weight` is 0, or `weigh`
    ///         is empty.
    Channel(Executor& executor, std::size_t capacity, std::size_t max_weight, std::function<std::size_t(T const&)> weigh)
        : executor_(executor), capacity_(capacity), max_weight_(max_weight), weigh_(std::move(weigh)) {
        SPILLWAY_EXPECTS(capacity > 0, "a Channel needs a capacity of at least 1", InvalidArgument);
        SPILLWAY_EXPECTS(max_weight > 0, "a Channel needs a weight bound of at least 1", InvalidArgument);
        SPILLWAY_EXPECTS(static_cast<bool>(weigh_), "a Channel with a weight bound needs a weight function", InvalidArgument);
    }

    /// Awaitable returned by `send()`.
    class SendAwaiter : private detail::Waiter {
      public:
        SendAwaiter(Channel& channel, T value, std::stop_token stop)
            : Waiter(channel.executor_, channel.mutex_, std::move(stop)), channel_(channel), value_(std::move(value)) {}
        [[nodiscard]] bool await_ready() const noexcept { return false; }
        bool await_suspend(std::coroutine_handle<> handle) {
            prepare(handle);
            MutexLock lock(channel_.mutex_);
            if (!cancelled(lock)) {
                if (!channel_.offer(lock, value_)) {
                    enqueue(lock, channel_.senders_);
                    return true;
                }
                sent_ = !channel_.closed_;
                complete(lock);
            }
            return false;
        }
        /// True if the value went into the channel; false if the channel was
        /// closed or stop was requested first (the value is dropped).
        bool await_resume() noexcept { return !finish() && sent_; }

      private:
        friend Channel;
        friend detail::WaitList;
        Channel& channel_;
        T value_;
        /// Whether the value was handed over; set before completion.
        bool sent_ = false;
    };

    /// Awaitable returned by `receive()`.
    class ReceiveAwaiter : private detail::Waiter {
      public:
        ReceiveAwaiter(Channel& channel, std::stop_token stop) noexcept
            : Waiter(channel.executor_, channel.mutex_, std::move(stop)), channel_(channel) {}
        [[nodiscard]] bool await_ready() const noexcept { return false; }
        bool await_suspend(std::coroutine_handle<> handle) {
            prepare(handle);
            MutexLock lock(channel_.mutex_);
            if (!cancelled(lock)) {
                value_ = channel_.take(lock);
                if (!value_ && !channel_.closed_) {
                    enqueue(lock, channel_.receivers_);
                    return true;
                }
                complete(lock);
            }
            return false;
        }
        /// The next value; `std::nullopt` once the channel is closed and
        /// drained, or if stop was requested first.
        std::optional<T> await_resume() noexcept(std::is_nothrow_move_constructible_v<T>) {
            finish();
            return std::move(value_);
        }

      private:
        friend Channel;
        friend detail::WaitList;
        Channel& channel_;
        /// The value handed over; set before completion.
        std::optional<T> value_;
    };

    /// `co_await channel.send(value, stop)`: see `SendAwaiter::await_resume`.
    [[nodiscard]] SendAwaiter send(T value, std::stop_token stop = {}) {
        return SendAwaiter(*this, std::move(value), std::move(stop));
    }

    /// `co_await channel.receive(stop)`: see `ReceiveAwaiter::await_resume`.
    [[nodiscard]] ReceiveAwaiter receive(std::stop_token stop = {}) noexcept {
        return ReceiveAwaiter(*this, std::move(stop));
    }

    /// Puts `value` in without waiting; returns false, leaving `value`
    /// untouched, if the channel is closed, full, has no room for its
    /// weight, or has senders waiting.
    [[nodiscard]] bool try_send(T& value) {
        MutexLock lock(mutex_);
        return !closed_ && offer(lock, value);
    }

    /// Takes the next value without waiting, if there is one.
    [[nodiscard]] std::optional<T> try_receive() {
        MutexLock lock(mutex_);
        return take(lock);
    }

    /// Closes the channel (see the class comment). Idempotent.
    void close() noexcept {
        MutexLock lock(mutex_);
        closed_ = true;
        while (!senders_.empty()) {
            senders_.template pop_front<SendAwaiter>().complete(lock);
        }
        while (!receivers_.empty()) {
            receivers_.template pop_front<ReceiveAwaiter>().complete(lock);
        }
    }

    /// Whether `close()` has been called.
    [[nodiscard]] bool closed() const noexcept {
        MutexLock lock(mutex_);
        return closed_;
    }

    /// Values buffered now (a snapshot).
    [[nodiscard]] std::size_t size() const noexcept {
        MutexLock lock(mutex_);
        return buffer_.size();
    }

    /// The weight of the values buffered now (a snapshot).
    [[nodiscard]] std::size_t weight() const noexcept {
        MutexLock lock(mutex_);
        return weight_;
    }

    /// The most values the channel buffers, as constructed.
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    /// The weight bound; the largest `std::size_t` for a channel without one.
    [[nodiscard]] std::size_t max_weight() const noexcept { return max_weight_; }

  private:
    /// A buffered value and its weight.
    struct Entry {
        Entry(T&& moved, std::size_t weighed) : value(std::move(moved)), weight(weighed) {}
        T value;
        std::size_t weight;
    };

    /// Whether a value of `weight` fits in the buffer now.
    [[nodiscard]] bool fits(std::size_t weight) const SPILLWAY_REQUIRES(mutex_) {
        return buffer_.empty()
               || (buffer_.size() < capacity_ && weight_ <= max_weight_ && weight <= max_weight_ - weight_);
    }

    /// Buffers `value`. Requires: it fits.
    /// @throws std::bad_alloc, leaving `value` where it was: the deque makes
    ///         room before it moves the value in.
    void push(T&& value, std::size_t weight) SPILLWAY_REQUIRES(mutex_) {
        buffer_.emplace_back(std::move(value), weight);
        weight_ += weight;
    }

    /// Hands `value` to the oldest waiting receiver, or buffers it if it
    /// fits and no sender waits before it. Returns false, leaving `value`
    /// alone, if neither is possible. A closed channel swallows the value
    /// (the sender reports failure).
    bool offer(MutexLock const& lock, T& value) SPILLWAY_REQUIRES(mutex_) {
        if (closed_) {
            return true;
        }
        if (!receivers_.empty()) {
            // Receivers wait only while the buffer is empty.
            ReceiveAwaiter& receiver = receivers_.template pop_front<ReceiveAwaiter>();
            receiver.value_.emplace(std::move(value));
            receiver.complete(lock);
            return true;
        }
        std::size_t const weight = weigh_(value);
        if (senders_.empty() && fits(weight)) {
            push(std::move(value), weight);
            return true;
        }
        return false;
    }

    /// Takes the oldest buffered value and moves in the values of the oldest
    /// waiting senders that fit in its place; nothing if the buffer is empty.
    std::optional<T> take(MutexLock const& lock) SPILLWAY_REQUIRES(mutex_) {
        if (buffer_.empty()) {
            return std::nullopt;
        }
        std::optional<T> value(std::move(buffer_.front().value));
        weight_ -= buffer_.front().weight;
        buffer_.pop_front();
        admit_senders(lock);
        return value;
    }

    /// For `senders_`, with `mutex_` held: a stop request ended a sender's
    /// wait, so the senders behind it may fit now.
    void admit_after_cancel(MutexLock const& lock) noexcept SPILLWAY_NO_THREAD_SAFETY_ANALYSIS {
        admit_senders(lock);
    }

    /// Moves the values of the oldest waiting senders that fit into the
    /// buffer, in order, up to the first that does not. Where buffering a
    /// value fails (no memory for the deque), its sender and those behind
    /// it wait on, each with its value, for the next receive.
    void admit_senders(MutexLock const& lock) noexcept SPILLWAY_REQUIRES(mutex_) {
        // Senders wait only while the buffer is not empty.
        while (!senders_.empty()) {
            SendAwaiter& sender = senders_.template front<SendAwaiter>();
            std::size_t const weight = weigh_(sender.value_);
            if (!fits(weight)) {
                break;
            }
            try {
                push(std::move(sender.value_), weight);
            } catch (std::bad_alloc const&) {
                return;  // the deque makes room before it moves the value, so the sender keeps it
            }
            senders_.template pop_front<SendAwaiter>();
            sender.sent_ = true;
            sender.complete(lock);
        }
    }

    Executor& executor_;
    std::size_t const capacity_;
    std::size_t const max_weight_;
    std::function<std::size_t(T const&)> const weigh_;

    mutable Mutex mutex_;
    /// At most `capacity_` values, weighing at most `max_weight_` together
    /// unless it holds one value. Receivers wait only while it is empty and
    /// senders only while it is not.
    std::deque<Entry> buffer_ SPILLWAY_GUARDED_BY(mutex_);
    /// The weights of the values in `buffer_` together.
    std::size_t weight_ SPILLWAY_GUARDED_BY(mutex_) = 0;
    bool closed_ SPILLWAY_GUARDED_BY(mutex_) = false;
    detail::WaitList senders_ SPILLWAY_GUARDED_BY(mutex_){
        [this](MutexLock const& lock) { admit_after_cancel(lock); }};
    detail::WaitList receivers_ SPILLWAY_GUARDED_BY(mutex_);
};

}  // namespace spillway::exec
