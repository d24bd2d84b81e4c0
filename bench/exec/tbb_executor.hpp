#pragma once
/// @file
/// An `Executor` on a oneTBB task arena, so the benchmarks can run exec/ on
/// oneTBB's scheduler side by side with `ThreadPool`.

#include <chrono>
#include <cstddef>

#include <tbb/task_arena.h>

#include <spillway/exec/executor.hpp>
#include <spillway/exec/timer_queue.hpp>

namespace spillway::bench {

/// Posts work to a `tbb::task_arena` whose slots all go to TBB's workers.
/// `wait` polls briefly, as `ThreadPool` does, then blocks: oneTBB has no
/// public way to run one queued task on a thread outside its arena, which is
/// one reason this is not spillway's executor (a nested join on one of its
/// threads could deadlock it).
class TbbExecutor final : public exec::Executor {
  public:
    /// Requires: a `tbb::global_control` allows `threads` workers.
    explicit TbbExecutor(int threads) : arena_(threads, 0), threads_(static_cast<std::size_t>(threads)) {}
    ~TbbExecutor() override = default;

    void post(exec::Work& work) noexcept override {
        arena_.enqueue([&work] { work.run(); });
    }
    void post_after(exec::TimedWork& work, std::chrono::nanoseconds delay) override {
        timers_.schedule(work, delay);
    }
    bool cancel(exec::TimedWork& work) noexcept override { return timers_.cancel(work); }
    void wait(exec::Notification& notification) override {
        for (int round = 0; round < poll_rounds && !notification.has_been_notified(); ++round) {
            __builtin_ia32_pause();
        }
        notification.wait();
    }
    std::size_t concurrency() const noexcept override { return threads_; }

  private:
    /// Pauses before blocking, as many as `ThreadPool` spends.
    static constexpr int poll_rounds = 4096;

    tbb::task_arena arena_;
    std::size_t const threads_;
    exec::TimerQueue timers_{*this};
};

}  // namespace spillway::bench
