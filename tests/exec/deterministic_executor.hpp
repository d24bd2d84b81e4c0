#pragma once
/// @file
/// An `Executor` for tests that runs everything on the test's own thread,
/// in an order a `Chooser` picks, on a virtual clock.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <spillway/core/deadline.hpp>
#include <spillway/core/error.hpp>
#include <spillway/exec/executor.hpp>

namespace spillway::test {

/// Picks one of several options at each choice point of a schedule.
class Chooser {
  public:
    virtual ~Chooser() = default;
    /// A number in [0, options). Requires: options > 0.
    virtual std::size_t choose(std::size_t options) = 0;
};

/// Chooses uniformly at random from a seed, so a failing seed replays.
class RandomChooser final : public Chooser {
  public:
    explicit RandomChooser(std::uint64_t seed) : random_(seed) {}
    std::size_t choose(std::size_t options) override {
        return std::uniform_int_distribution<std::size_t>(0, options - 1)(random_);
    }

  private:
    std::mt19937_64 random_;
};

/// Enumerates every sequence of choices, depth first: run the scenario, then
/// `next_schedule()`, until it returns false. The scenario must be
/// deterministic given the choices.
class ExhaustiveChooser final : public Chooser {
  public:
    std::size_t choose(std::size_t options) override {
        if (options == 1) {
            return 0;
        }
        if (depth_ == path_.size()) {
            path_.push_back({0, options});
        }
        SPILLWAY_ASSERT(path_[depth_].options == options, "the scenario is not deterministic");
        return path_[depth_++].taken;
    }

    /// Moves to the next unexplored schedule; false once all are explored.
    bool next_schedule() {
        while (!path_.empty() && path_.back().taken + 1 == path_.back().options) {
            path_.pop_back();
        }
        depth_ = 0;
        if (path_.empty()) {
            return false;
        }
        ++path_.back().taken;
        ++schedules_;
        return true;
    }

    /// How many schedules have run, counting the current one.
    [[nodiscard]] std::size_t schedules() const noexcept { return schedules_; }

  private:
    struct Choice {
        std::size_t taken;
        std::size_t options;
    };
    std::vector<Choice> path_;
    std::size_t depth_ = 0;
    std::size_t schedules_ = 1;
};

/// Runs all work on the thread that calls `step`, `run_until_idle` or
/// `wait`, choosing which ready work runs next with a `Chooser`. Timers run
/// on a virtual clock that jumps to the next deadline when nothing else is
/// ready, so tests with timeouts take no real time. A `wait` that can never
/// be satisfied (nothing ready, no timer) aborts: it is a deadlock.
///
/// Thread safety: single-threaded; only the test's thread may use it.
class DeterministicExecutor final : public exec::Executor {
  public:
    explicit DeterministicExecutor(Chooser& chooser, std::size_t concurrency = 2)
        : chooser_(chooser), concurrency_(concurrency) {}

    void post(exec::Work& work) noexcept override { ready_.push_back(&work); }

    void post_after(exec::TimedWork& work, std::chrono::nanoseconds delay) override {
        work.deadline = deadline_after(now_, delay);
        timers_.push_back({work.deadline, next_sequence_++, &work});
    }

    bool cancel(exec::TimedWork& work) noexcept override {
        auto const found = std::find_if(timers_.begin(), timers_.end(),
                                        [&](Timer const& timer) { return timer.work == &work; });
        if (found == timers_.end()) {
            return false;
        }
        timers_.erase(found);
        return true;
    }

    void wait(exec::Notification& notification) override {
        while (!notification.has_been_notified()) {
            if (!step()) {
                SPILLWAY_FATAL("deadlock: a wait with no work ready and no timer pending");
            }
        }
        notification.wait();
    }

    [[nodiscard]] std::size_t concurrency() const noexcept override { return concurrency_; }

    /// Runs one ready work item picked by the chooser; if none is ready,
    /// first advances the clock to the earliest timer. Returns false if
    /// there was nothing to run at all.
    bool step() {
        if (ready_.empty() && !fire_next_timers()) {
            return false;
        }
        std::size_t const index = chooser_.choose(ready_.size());
        exec::Work* work = ready_[index];
        ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(index));
        CurrentScope scope(*this);
        work->run();
        return true;
    }

    /// Steps until nothing is ready and no timer is pending.
    void run_until_idle() {
        while (step()) {
        }
    }

    /// Whether nothing is ready and no timer is pending.
    [[nodiscard]] bool idle() const noexcept { return ready_.empty() && timers_.empty(); }

    /// Work ready to run now.
    [[nodiscard]] std::size_t ready() const noexcept { return ready_.size(); }

    /// Virtual time passed since construction.
    [[nodiscard]] std::chrono::nanoseconds elapsed() const noexcept { return now_ - start_; }

  private:
    struct Timer {
        std::chrono::steady_clock::time_point deadline;
        std::uint64_t sequence;  ///< orders timers with equal deadlines, deterministically
        exec::TimedWork* work;
    };

    /// Moves the clock to the earliest deadline and readies every timer due
    /// then, in the order they were posted. Returns false if none is pending.
    bool fire_next_timers() {
        if (timers_.empty()) {
            return false;
        }
        std::sort(timers_.begin(), timers_.end(), [](Timer const& left, Timer const& right) {
            return left.deadline != right.deadline ? left.deadline < right.deadline
                                                   : left.sequence < right.sequence;
        });
        now_ = timers_.front().deadline;
        auto const due = std::find_if(timers_.begin(), timers_.end(),
                                      [&](Timer const& timer) { return timer.deadline > now_; });
        for (auto timer = timers_.begin(); timer != due; ++timer) {
            ready_.push_back(timer->work);
        }
        timers_.erase(timers_.begin(), due);
        return true;
    }

    Chooser& chooser_;
    std::size_t const concurrency_;
    std::vector<exec::Work*> ready_;
    std::vector<Timer> timers_;
    std::uint64_t next_sequence_ = 0;
    std::chrono::steady_clock::time_point const start_{};
    std::chrono::steady_clock::time_point now_ = start_;
};

}  // namespace spillway::test
