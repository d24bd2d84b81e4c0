// seq_join on the deterministic executor: every completion order of small
// joins, and random schedules of larger ones, each checked against the
// join's invariants.

#include <spillway/exec/event.hpp>
#include <spillway/exec/semaphore.hpp>
#include <spillway/exec/seq_join.hpp>
#include <spillway/exec/task_group.hpp>

#include "deterministic_executor.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <ranges>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::exec;
using namespace std::chrono_literals;

namespace {

/// One run of a join: its shape and what goes wrong in it.
struct Scenario {
    std::size_t items = 0;
    std::size_t window = 1;
    std::size_t grain = 1;
    std::size_t prefetch = 0;
    /// Times each item suspends (and so lets others run) before it finishes.
    std::vector<int> hops;
    std::optional<std::size_t> failing_item;  ///< this item throws (none if past the end)
    std::optional<std::size_t> failing_pull;  ///< the source throws instead of yielding this item
    std::optional<std::size_t> close_after;   ///< the consumer destroys the join after this many results

    [[nodiscard]] std::string describe() const {
        std::string text = "items " + std::to_string(items) + ", window " + std::to_string(window) + ", grain "
                           + std::to_string(grain) + ", prefetch " + std::to_string(prefetch);
        if (failing_item) {
            text += ", item " + std::to_string(*failing_item) + " throws";
        }
        if (failing_pull) {
            text += ", pull " + std::to_string(*failing_pull) + " throws";
        }
        if (close_after) {
            text += ", closed after " + std::to_string(*close_after);
        }
        return text;
    }
};

/// The source, the item bodies and the consumer's checks that every way of
/// running a scenario shares. Together they check: results come out in
/// source order; started - consumed <= window; pulls <= consumed + window +
/// prefetch; no item starts once stop is requested; an error surfaces at
/// its position, after every earlier result; the end comes after the last.
class Harness {
  public:
    explicit Harness(Scenario const& scenario) : scenario_(scenario), started_(scenario.items, false) {}

    /// The source: yields 0, 1, ... and throws where the scenario says.
    auto source() {
        return [this]() -> std::optional<std::size_t> {
            EXPECT_LE(pulls_, consumed_ + (delivering_ ? 1 : 0) + scenario_.window + scenario_.prefetch);
            if (scenario_.failing_pull == pulls_) {
                throw std::runtime_error("pull " + std::to_string(pulls_));
            }
            if (pulls_ == scenario_.items) {
                return std::nullopt;
            }
            return pulls_++;
        };
    }

    /// Grain and prefetch from the scenario, and an observer that checks
    /// the window each time an item starts.
    [[nodiscard]] SeqJoinOptions options() {
        SeqJoinOptions options;
        options.grain = scenario_.grain;
        options.prefetch = scenario_.prefetch;
        options.observer = [this](ItemEvent const& event) {
            if (event.phase == ItemEvent::Phase::started) {
                started_[event.index] = true;
                ++started_count_;
                EXPECT_LE(started_count_ - consumed_, scenario_.window) << "item " << event.index;
            }
        };
        return options;
    }

    /// The start of item `item`'s body.
    void enter(std::size_t item, std::stop_token const& stop) {
        EXPECT_FALSE(stop.stop_requested()) << "item " << item << " started after the stop request";
        ++live_;
    }

    /// The end of item `item`'s body: its result, or the scenario's error.
    std::size_t leave(std::size_t item) {
        --live_;
        if (scenario_.failing_item == item) {
            throw std::runtime_error("item " + std::to_string(item));
        }
        return item * 10;
    }

    /// Wraps the consumer's call for the next result.
    void before_next() { delivering_ = true; }

    /// Checks what the consumer's call for the next result gave: `result`,
    /// the end, or `error`. Returns whether the consumer goes on; when it
    /// stops, nothing of the join may be left on `executor`.
    bool took(std::optional<std::size_t> result, std::exception_ptr const& error,
              test::DeterministicExecutor const& executor) {
        if (error) {
            std::size_t const position = std::min(scenario_.failing_item.value_or(scenario_.items),
                                                  scenario_.failing_pull.value_or(scenario_.items));
            EXPECT_EQ(consumed_, position);
            EXPECT_TRUE(executor.idle()) << "work of the join left after it threw";
            return false;
        }
        if (!result) {
            EXPECT_EQ(consumed_, scenario_.items);
            bool const expects_error = scenario_.failing_item.value_or(scenario_.items) < scenario_.items
                                       || scenario_.failing_pull.has_value();
            EXPECT_FALSE(expects_error) << "the error was never reported";
            EXPECT_TRUE(executor.idle()) << "work of the join left after it returned the end";
            return false;
        }
        delivered(*result);
        return true;
    }

    /// Whether the consumer should destroy the join now.
    [[nodiscard]] bool closing() const { return scenario_.close_after == consumed_; }
    [[nodiscard]] bool started(std::size_t item) const { return started_[item]; }
    [[nodiscard]] std::size_t live() const { return live_; }

  private:
    void delivered(std::size_t result) {
        delivering_ = false;
        EXPECT_EQ(result, consumed_ * 10);
        ++consumed_;
        EXPECT_LE(pulls_, consumed_ + scenario_.window + scenario_.prefetch);
    }

    Scenario const& scenario_;
    std::size_t pulls_ = 0;
    std::size_t started_count_ = 0;
    std::vector<bool> started_;
    std::size_t consumed_ = 0;
    std::size_t live_ = 0;  ///< items inside their body
    /// Set while the consumer waits for a result: the join already refills
    /// for it before the consumer has counted it.
    bool delivering_ = false;
};

/// Runs `scenario` with a blocking consumer; `chooser` decides when the
/// consumer asks for the next result and which ready work the executor
/// runs. `Asynchronous` picks fn returning `Task` (suspending `hops` times
/// per item) or a plain value. Checks the `Harness` invariants and that
/// nothing of the join is left on the executor once it returns the end,
/// throws, or is destroyed.
template <bool Asynchronous>
void run_scenario(Scenario const& scenario, test::Chooser& chooser) {
    SCOPED_TRACE(scenario.describe());
    test::DeterministicExecutor executor(chooser, 2);
    Harness harness(scenario);
    auto fn = [&](std::size_t item, std::stop_token const& stop) {
        if constexpr (Asynchronous) {
            return [](test::DeterministicExecutor& on, Harness& checks, int hops, std::size_t index,
                      std::stop_token const& token) -> Task<std::size_t> {
                checks.enter(index, token);
                for (int hop = 0; hop < hops; ++hop) {
                    co_await on.schedule();
                }
                co_return checks.leave(index);
            }(executor, harness, scenario.hops[item], item, stop);
        } else {
            harness.enter(item, stop);
            return harness.leave(item);
        }
    };
    {
        auto join = seq_join(executor, scenario.window, harness.source(), fn, harness.options());
        for (;;) {
            while (chooser.choose(2) == 1 && executor.step()) {
            }
            if (harness.closing()) {
                break;
            }
            std::optional<std::size_t> result;
            std::exception_ptr error;
            harness.before_next();
            try {
                result = join.next();
            } catch (std::runtime_error const&) {
                error = std::current_exception();
            }
            if (!harness.took(result, error, executor)) {
                break;
            }
        }
    }
    EXPECT_TRUE(executor.idle()) << "work of the join left after it was destroyed";
    EXPECT_EQ(harness.live(), 0u);
}

/// Runs `scenario` with items that wait at a gate until the test opens it,
/// and a coroutine consumer that takes a result only when the test lets it.
/// `order` picks, at each step, which started item's gate opens next or
/// whether the consumer takes the next result, so an exhaustive `order`
/// explores every completion order and every consumption timing. The
/// executor's own choices come from a fixed seed. Checks what
/// `run_scenario` checks.
void run_gated(Scenario const& scenario, test::Chooser& order) {
    SCOPED_TRACE(scenario.describe());
    test::RandomChooser inner(scenario.items);
    test::DeterministicExecutor executor(inner, 2);
    Harness harness(scenario);
    std::vector<std::unique_ptr<Event>> gates;
    for (std::size_t i = 0; i < scenario.items; ++i) {
        gates.push_back(std::make_unique<Event>(executor));
    }
    std::vector<bool> opened(scenario.items, false);
    Semaphore turns(executor, 0);
    bool wants_result = false;
    bool finished = false;
    auto fn = [&](std::size_t item, std::stop_token const& stop) -> Task<std::size_t> {
        harness.enter(item, stop);
        co_await gates[item]->wait(stop);
        co_return harness.leave(item);
    };
    TaskGroup consumer(executor);
    consumer.spawn([&](std::stop_token const&) -> Task<void> {
        {
            auto join = seq_join(executor, scenario.window, harness.source(), fn, harness.options());
            while (!harness.closing()) {
                wants_result = true;
                co_await turns.acquire();
                wants_result = false;
                std::optional<std::size_t> result;
                std::exception_ptr error;
                harness.before_next();
                try {
                    result = co_await join.next_async();
                } catch (std::runtime_error const&) {
                    error = std::current_exception();
                }
                if (!harness.took(result, error, executor)) {
                    break;
                }
            }
        }
        EXPECT_TRUE(executor.idle()) << "work of the join left after it was destroyed";
        finished = true;
    });
    while (!finished && !::testing::Test::HasFailure()) {
        executor.run_until_idle();
        std::vector<std::size_t> closed_gates;
        for (std::size_t item = 0; item < scenario.items; ++item) {
            if (harness.started(item) && !opened[item]) {
                closed_gates.push_back(item);
            }
        }
        std::size_t const options = closed_gates.size() + (wants_result ? 1 : 0);
        if (options == 0) {
            ASSERT_TRUE(finished) << "nothing can make progress";
            break;
        }
        std::size_t const choice = order.choose(options);
        if (choice < closed_gates.size()) {
            opened[closed_gates[choice]] = true;
            gates[closed_gates[choice]]->set();
        } else {
            turns.release();
        }
    }
    consumer.wait();
    EXPECT_TRUE(executor.idle());
    EXPECT_EQ(harness.live(), 0u);
}

/// A random scenario; the seed decides everything, so a failure replays.
Scenario random_scenario(std::uint64_t seed) {
    std::mt19937_64 random(seed);
    auto pick = [&](std::size_t low, std::size_t high) {
        return std::uniform_int_distribution<std::size_t>(low, high)(random);
    };
    Scenario scenario;
    scenario.items = pick(0, 40);
    scenario.window = pick(1, 8);
    scenario.grain = pick(1, scenario.window);
    scenario.prefetch = pick(0, 1) == 0 ? 0 : pick(1, 6);
    for (std::size_t i = 0; i < scenario.items; ++i) {
        scenario.hops.push_back(static_cast<int>(pick(0, 3)));
    }
    switch (pick(0, 3)) {
    case 0:
        scenario.failing_item = pick(0, scenario.items);
        break;
    case 1:
        scenario.failing_pull = pick(0, scenario.items);
        break;
    case 2:
        scenario.close_after = pick(0, scenario.items);
        break;
    default:
        break;
    }
    return scenario;
}

/// Every completion order and consumption timing of every join with up to
/// 6 items and a window of up to 3, for each grain that fits the window,
/// with and without prefetching, with `vary` applied to each scenario;
/// returns how many schedules ran.
std::size_t explore_every_completion_order(auto&& vary) {
    std::size_t schedules = 0;
    for (std::size_t items = 1; items <= 6; ++items) {
        for (std::size_t window = 1; window <= 3; ++window) {
            for (std::size_t grain = 1; grain <= window; ++grain) {
                for (std::size_t prefetch : {0, 2}) {
                    Scenario scenario{items, window, grain, prefetch, {}, {}, {}, {}};
                    vary(scenario);
                    test::ExhaustiveChooser order;
                    do {
                        run_gated(scenario, order);
                        if (::testing::Test::HasFailure()) {
                            return schedules;
                        }
                    } while (order.next_schedule());
                    schedules += order.schedules();
                }
            }
        }
    }
    return schedules;
}

}  // namespace

TEST(SeqJoinSchedules, EveryCompletionOrderOfSmallJoinsKeepsOrderAndBounds) {
    std::size_t const schedules = explore_every_completion_order([](Scenario&) {});
    // Far more than one schedule per shape, so completion orders did vary.
    EXPECT_GT(schedules, 1'000u);
    RecordProperty("schedules", std::to_string(schedules));
}

TEST(SeqJoinSchedules, EveryCompletionOrderWithAFailingItemReportsItInPlace) {
    explore_every_completion_order([](Scenario& scenario) { scenario.failing_item = scenario.items / 2; });
}

TEST(SeqJoinSchedules, EveryCompletionOrderOfAJoinClosedEarlyLeavesNothingRunning) {
    explore_every_completion_order([](Scenario& scenario) { scenario.close_after = scenario.items / 2; });
}

TEST(SeqJoinSchedules, RandomSchedulesOfLargerJoinsKeepOrderAndBounds) {
    for (std::uint64_t seed = 0; seed < 300 && !HasFailure(); ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        Scenario const scenario = random_scenario(seed);
        test::RandomChooser chooser(seed);
        run_scenario<true>(scenario, chooser);
        test::RandomChooser again(seed);
        run_scenario<false>(scenario, again);
    }
}

namespace {

/// Item `i` waits for the event that item `i + distance` sets when it
/// starts (items past the end wait for nothing). Returns the results, and
/// the stall reports seen; a report sets every event, breaking the wait.
struct DependencyOutcome {
    std::vector<std::size_t> results;
    std::vector<StallReport> stalls;
};

DependencyOutcome run_dependency(test::Chooser& chooser, std::size_t items, std::size_t window, std::size_t distance) {
    test::DeterministicExecutor executor(chooser, 2);
    std::vector<std::unique_ptr<Event>> started;
    for (std::size_t i = 0; i < items; ++i) {
        started.push_back(std::make_unique<Event>(executor));
    }
    DependencyOutcome outcome;
    SeqJoinOptions options;
    options.stall_timeout = 1s;
    options.on_stall = [&](StallReport const& report) {
        outcome.stalls.push_back(report);
        for (auto& event : started) {
            event->set();
        }
    };
    auto fn = [&](std::size_t item, std::stop_token const& stop) -> Task<std::size_t> {
        started[item]->set();
        if (item + distance < items) {
            co_await started[item + distance]->wait(stop);
        }
        co_return item;
    };
    {
        auto join = seq_join(executor, window, std::views::iota(std::size_t{0}, items), fn, options);
        for (std::size_t result : join) {
            outcome.results.push_back(result);
        }
    }
    EXPECT_TRUE(executor.idle());
    return outcome;
}

}  // namespace

TEST(SeqJoinSchedules, AnItemMayWaitForALaterItemInsideItsWindow) {
    for (std::size_t window = 2; window <= 4; ++window) {
        for (std::size_t distance = 1; distance < window; ++distance) {
            test::ExhaustiveChooser chooser;
            do {
                DependencyOutcome const outcome = run_dependency(chooser, 5, window, distance);
                EXPECT_EQ(outcome.results, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
                EXPECT_TRUE(outcome.stalls.empty()) << "window " << window << ", distance " << distance;
            } while (chooser.next_schedule() && !HasFailure());
        }
    }
}

TEST(SeqJoinSchedules, AnItemWaitingForAnItemAWindowOrMoreAheadIsReportedAsAStall) {
    for (std::size_t window = 1; window <= 3; ++window) {
        for (std::size_t distance = window; distance <= window + 1; ++distance) {
            test::RandomChooser chooser(window * 10 + distance);
            DependencyOutcome const outcome = run_dependency(chooser, 8, window, distance);
            EXPECT_EQ(outcome.results, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7}));
            ASSERT_EQ(outcome.stalls.size(), 1u) << "window " << window << ", distance " << distance;
            StallReport const& report = outcome.stalls.front();
            EXPECT_EQ(report.window, window);
            EXPECT_EQ(report.next_to_consume, 0u);
            // The whole window is stuck behind item 0.
            std::vector<std::size_t> pending = report.running;
            pending.insert(pending.end(), report.queued.begin(), report.queued.end());
            std::vector<std::size_t> expected(window);
            std::iota(expected.begin(), expected.end(), std::size_t{0});
            EXPECT_EQ(pending, expected);
            EXPECT_EQ(report.stalled_for, 1s);
        }
    }
}
