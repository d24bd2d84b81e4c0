#include <spillway/exec/parallel_join.hpp>
#include <spillway/exec/thread_pool.hpp>

#include <common/concurrency_tracker.hpp>
#include <common/rendezvous.hpp>
#include <common/watchdog.hpp>

#include "deterministic_executor.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <numeric>
#include <ranges>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::exec;

namespace {

/// `n` items; item i yields i squared after suspending `n - i` times, so
/// later items tend to finish first.
auto squares(Executor& executor, int n) {
    return std::views::iota(0, n) | std::views::transform([&executor, n](int i) {
               return [&executor, n, i](std::stop_token const&) -> Task<int> {
                   for (int hop = i; hop < n; ++hop) {
                       co_await executor.schedule();
                   }
                   co_return i * i;
               };
           });
}

}  // namespace

TEST(ParallelJoin, ReturnsResultsInIndexOrderWhateverOrderTheyFinishIn) {
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
        test::RandomChooser chooser(seed);
        test::DeterministicExecutor executor(chooser);
        std::vector<int> const results = parallel_join(executor, squares(executor, 12));
        ASSERT_EQ(results.size(), 12u);
        for (int i = 0; i < 12; ++i) {
            EXPECT_EQ(results[static_cast<std::size_t>(i)], i * i) << "seed " << seed;
        }
        EXPECT_TRUE(executor.idle());
    }
}

TEST(ParallelJoin, StartsEveryItemAtOnce) {
    ThreadPool pool(ThreadPool::Config{4});
    test::Rendezvous all(4);
    std::vector<std::function<bool(std::stop_token const&)>> items(
        4, [&](std::stop_token const&) { return all.arrive_and_wait(); });
    EXPECT_EQ(parallel_join(pool, items), std::vector<bool>(4, true));
}

TEST(ParallelJoin, OnTheFirstErrorStopsTheRestWaitsForThemAndRethrows) {
    // Under many schedules of a deterministic executor: item 5 throws, the
    // others sleep for an hour of virtual time unless stopped. Every item
    // that started before the error is cut short by the stop, every item
    // not started by then is skipped (its function never runs), and none
    // is still running when the call throws.
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
        test::RandomChooser chooser(seed);
        test::DeterministicExecutor executor(chooser, 4);
        int running = 0;
        int started = 0;
        int started_after_stop = 0;
        int cut_short = 0;
        bool thrown = false;
        auto items = std::views::iota(0, 8) | std::views::transform([&](int i) {
                         return [&, i](std::stop_token const& stop) -> Task<int> {
                             ++started;
                             started_after_stop += thrown ? 1 : 0;
                             if (i == 5) {
                                 thrown = true;
                                 throw std::runtime_error("item 5");
                             }
                             ++running;
                             bool const elapsed = co_await executor.sleep_for(std::chrono::hours(1), stop);
                             cut_short += elapsed ? 0 : 1;
                             --running;
                             co_return i;
                         };
                     });
        try {
            parallel_join(executor, items);
            ADD_FAILURE() << "seed " << seed << ": no exception";
        } catch (std::runtime_error const& error) {
            EXPECT_EQ(std::string(error.what()), "item 5") << "seed " << seed;
        }
        EXPECT_EQ(running, 0) << "seed " << seed << ": an item outlived the call";
        EXPECT_EQ(started_after_stop, 0) << "seed " << seed << ": an item started after the stop";
        EXPECT_EQ(cut_short, started - 1) << "seed " << seed << ": a started item was not stopped";
    }
}

TEST(ParallelJoin, SettledReturnsEveryOutcome) {
    test::RandomChooser chooser(7);
    test::DeterministicExecutor executor(chooser);
    auto items = std::views::iota(0, 6) | std::views::transform([](int i) {
                     return [i](std::stop_token const& stop) -> int {
                         EXPECT_FALSE(stop.stop_requested());
                         if (i % 2 == 1) {
                             throw std::runtime_error("odd " + std::to_string(i));
                         }
                         return i;
                     };
                 });
    auto const outcomes = parallel_join_settled(executor, items);
    ASSERT_EQ(outcomes.size(), 6u);
    for (int i = 0; i < 6; ++i) {
        auto const& outcome = outcomes[static_cast<std::size_t>(i)];
        if (i % 2 == 0) {
            EXPECT_EQ(outcome.value(), i);
            EXPECT_EQ(outcome.error(), nullptr);
        } else {
            EXPECT_FALSE(outcome.has_value());
            EXPECT_THROW(static_cast<void>(outcome.value()), std::runtime_error);
        }
    }
}

TEST(ParallelJoin, AnEmptyBatchYieldsNoResults) {
    test::RandomChooser chooser(8);
    test::DeterministicExecutor executor(chooser);
    std::vector<std::function<int(std::stop_token const&)>> none;
    EXPECT_TRUE(parallel_join(executor, none).empty());
}

TEST(ParallelJoin, NestedJoinsOnAOneThreadPoolDoNotDeadlock) {
    test::Watchdog watchdog("nested parallel_join on one thread");
    ThreadPool pool(ThreadPool::Config{1});
    auto outer = std::views::iota(0, 4) | std::views::transform([&](int i) {
                     return [&, i](std::stop_token const&) {
                         auto const inner = parallel_join(pool, squares(pool, 3));
                         return i + std::accumulate(inner.begin(), inner.end(), 0);
                     };
                 });
    EXPECT_EQ(parallel_join(pool, outer), (std::vector<int>{5, 6, 7, 8}));
}
