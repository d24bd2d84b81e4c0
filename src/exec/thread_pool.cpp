#include <spillway/exec/thread_pool.hpp>

#include <algorithm>
#include <memory>

#include <spillway/core/error.hpp>

namespace spillway::exec {
namespace {

/// How long an idle thread polls for work before it goes to sleep: first
/// `pause_rounds` rounds of a CPU pause, then `yield_rounds` yields of its
/// core. Sleeping and being woken costs microseconds of system calls on both
/// sides; polling for about as long lets a busy join hand over its next item
/// without them. Pausing costs no system call (a storm of yields showed up
/// as seconds of system time on a loaded machine); the final yields let a
/// thread with work run when there are more threads than cores.
constexpr int pause_rounds = 4096;
constexpr int yield_rounds = 8;

/// Tells the CPU this is a spin-wait loop.
void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
}

/// The largest `threads` option accepted; far beyond any sensible value.
constexpr std::int64_t max_threads = 4096;

}  // namespace

ThreadPool::Config ThreadPool::Config::from_options(Options const& options) {
    auto const threads = options.get_int("threads", 0, 0, max_threads);
    return Config{threads == 0 ? default_threads() : static_cast<std::size_t>(threads)};
}

std::size_t ThreadPool::Config::default_threads() noexcept {
    return std::max<std::size_t>(1, std::thread::hardware_concurrency());
}

ThreadPool::ThreadPool() : ThreadPool(Config{}) {}

ThreadPool::ThreadPool(Config config) {
    SPILLWAY_EXPECTS(config.threads > 0,
                     "a thread pool needs at least one thread; set option `threads` to 1 or more",
                     InvalidArgument);
    parking_.reserve(config.threads);
    workers_.reserve(config.threads);
    for (std::size_t i = 0; i < config.threads; ++i) {
        parking_.push_back(std::make_unique<Notification>());
    }
    for (std::size_t i = 0; i < config.threads; ++i) {
        workers_.emplace_back([this, &parking = *parking_[i]] { work(parking); });
    }
}

ThreadPool::~ThreadPool() {
    SPILLWAY_ASSERT(timers_.pending() == 0,
                    "a ThreadPool is destroyed while " << timers_.pending()
                    << " timers are pending; the coroutines sleeping on them would never resume");
    {
        MutexLock lock(mutex_);
        stopping_ = true;
        for (Notification* sleeper : idle_) {
            sleeper->wake();
        }
        idle_.clear();
    }
    for (std::thread& worker : workers_) {
        worker.join();
    }
}

void ThreadPool::post(Work& work) noexcept {
    MutexLock lock(mutex_);
    work.next = nullptr;
    if (tail_ != nullptr) {
        tail_->next = &work;
    } else {
        head_ = &work;
    }
    tail_ = &work;
    // relaxed: only a hint for pollers; take() re-checks under the mutex.
    queued_.fetch_add(1, std::memory_order_relaxed);
    wake_one(lock);
}

void ThreadPool::post_after(TimedWork& work, std::chrono::nanoseconds delay) {
    timers_.schedule(work, delay);
}

bool ThreadPool::cancel(TimedWork& work) noexcept { return timers_.cancel(work); }

void ThreadPool::wait(Notification& notification) {
    CurrentScope scope(*this);
    bool woken_for_work = false;
    while (!notification.has_been_notified()) {
        if (Work* work = take()) {
            work->run();
            continue;
        }
        if (spin_until_work(&notification) || !park(notification)) {
            continue;
        }
        notification.wait_or_wake();
        woken_for_work = !unpark(notification);
    }
    notification.wait();
    if (woken_for_work) {
        // A post woke this thread for its work just as the notification
        // came, so it may leave the work queued: another must run it.
        wake_for_queued_work();
    }
}

void ThreadPool::work(Notification& parking) {
    CurrentScope scope(*this);
    for (;;) {
        if (Work* work = take()) {
            work->run();
            continue;
        }
        if (spin_until_work(nullptr)) {
            continue;
        }
        if (park(parking)) {
            parking.wait_or_wake();
        } else if (finished()) {
            return;
        }
    }
}

Work* ThreadPool::take() noexcept {
    // relaxed: a stale zero only sends the caller to spin or to park(), which
    // re-checks under the mutex.
    if (queued_.load(std::memory_order_relaxed) == 0) {
        return nullptr;
    }
    MutexLock lock(mutex_);
    Work* work = head_;
    if (work == nullptr) {
        return nullptr;
    }
    head_ = work->next;
    if (head_ == nullptr) {
        tail_ = nullptr;
    }
    queued_.fetch_sub(1, std::memory_order_relaxed);
    return work;
}

bool ThreadPool::spin_until_work(Notification const* done) const noexcept {
    for (int round = 0; round < pause_rounds + yield_rounds; ++round) {
        // relaxed: a hint; the caller takes the work under the mutex.
        if (queued_.load(std::memory_order_relaxed) > 0
            || (done != nullptr && done->has_been_notified()))
        {
            return true;
        }
        if (round < pause_rounds) {
            pause();
        } else {
            std::this_thread::yield();
        }
    }
    return false;
}

bool ThreadPool::park(Notification& parking) noexcept {
    MutexLock lock(mutex_);
    if (head_ != nullptr || stopping_) {
        return false;
    }
    idle_.push_back(&parking);
    return true;
}

bool ThreadPool::finished() noexcept {
    MutexLock lock(mutex_);
    return stopping_ && head_ == nullptr;
}

bool ThreadPool::unpark(Notification& parking) noexcept {
    MutexLock lock(mutex_);
    auto const found = std::find(idle_.begin(), idle_.end(), &parking);
    if (found == idle_.end()) {
        return false;
    }
    idle_.erase(found);
    return true;
}

void ThreadPool::wake_for_queued_work() noexcept {
    MutexLock lock(mutex_);
    if (head_ != nullptr) {
        wake_one(lock);
    }
}

void ThreadPool::wake_one(MutexLock const& /*lock*/) noexcept {
    if (!idle_.empty()) {
        idle_.back()->wake();
        idle_.pop_back();
    }
}

}  // namespace spillway::exec
