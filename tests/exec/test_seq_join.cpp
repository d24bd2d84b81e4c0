// seq_join on real threads: its interface, its bounds measured from both
// sides, and its structured-concurrency guarantees under the sanitizers.

#include <spillway/core/error.hpp>
#include <spillway/core/options.hpp>
#include <spillway/exec/event.hpp>
#include <spillway/exec/parallel_join.hpp>
#include <spillway/exec/seq_join.hpp>
#include <spillway/exec/sync_wait.hpp>
#include <spillway/exec/thread_pool.hpp>

#include <common/concurrency_tracker.hpp>
#include <common/error_matchers.hpp>
#include <common/rendezvous.hpp>
#include <common/watchdog.hpp>

#include "deterministic_executor.hpp"

#include <atomic>
#include <list>
#include <memory>
#include <random>
#include <ranges>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

using namespace spillway;
using namespace spillway::exec;
using namespace std::chrono_literals;

namespace {

auto square = [](int item, std::stop_token const&) { return item * item; };

}  // namespace

TEST(SeqJoin, IteratesResultsInSourceOrder) {
    ThreadPool pool(ThreadPool::Config{2});
    std::vector<int> const items{3, 1, 4, 1, 5, 9, 2, 6};
    std::vector<int> results;
    for (int result : seq_join(pool, 3, items, square)) {
        results.push_back(result);
    }
    EXPECT_EQ(results, (std::vector<int>{9, 1, 16, 1, 25, 81, 4, 36}));
}

TEST(SeqJoin, AcceptsAGeneratorFunctionAsTheSource) {
    ThreadPool pool(ThreadPool::Config{2});
    int next = 0;
    auto generator = [&]() -> std::optional<int> { return next < 5 ? std::optional<int>(next++) : std::nullopt; };
    auto join = seq_join(pool, 2, generator, square);
    std::vector<int> results;
    while (std::optional<int> result = join.next()) {
        results.push_back(*result);
    }
    EXPECT_EQ(results, (std::vector<int>{0, 1, 4, 9, 16}));
    EXPECT_FALSE(join.next().has_value());
}

TEST(SeqJoin, PullsNothingBeforeTheFirstResultIsAskedFor) {
    // On a deterministic executor, running every piece of work the join
    // posted before `next` is called must not pull from the source.
    test::RandomChooser chooser(1);
    test::DeterministicExecutor executor(chooser);
    int pulls = 0;
    auto generator = [&]() -> std::optional<int> { return ++pulls <= 3 ? std::optional<int>(1) : std::nullopt; };
    auto join = seq_join(executor, 2, generator, square);
    executor.run_until_idle();
    EXPECT_EQ(pulls, 0);
    EXPECT_EQ(join.next(), 1);
    EXPECT_GT(pulls, 0);
}

TEST(SeqJoin, ServesACoroutineConsumerThroughNextAsync) {
    ThreadPool pool(ThreadPool::Config{2});
    auto consumer = [&]() -> Task<std::vector<std::string>> {
        auto join = seq_join(pool, 4, std::views::iota(0, 10), [&](int item, std::stop_token const&) -> Task<std::string> {
            co_await pool.schedule();
            co_return std::to_string(item);
        });
        std::vector<std::string> results;
        while (std::optional<std::string> result = co_await join.next_async()) {
            results.push_back(std::move(*result));
        }
        co_return results;
    };
    std::vector<std::string> const results = sync_wait(pool, consumer());
    ASSERT_EQ(results.size(), 10u);
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(results[static_cast<std::size_t>(i)], std::to_string(i));
    }
}

TEST(SeqJoin, RethrowsAnItemsErrorInPlaceAfterTheEarlierResults) {
    ThreadPool pool(ThreadPool::Config{2});
    auto join = seq_join(pool, 4, std::views::iota(0, 100), [](int item, std::stop_token const&) {
        if (item == 7) {
            throw std::runtime_error("item 7");
        }
        return item;
    });
    for (int i = 0; i < 7; ++i) {
        EXPECT_EQ(join.next(), i);
    }
    EXPECT_THROW(join.next(), std::runtime_error);
    EXPECT_FALSE(join.next().has_value());
}

TEST(SeqJoin, RejectsABadWindowOrGrain) {
    ThreadPool pool(ThreadPool::Config{1});
    std::vector<int> const items{1};
    EXPECT_THROW_WITH(seq_join(pool, 0, items, square), InvalidArgument, "window of at least 1");
    SeqJoinOptions options;
    options.grain = 5;
    EXPECT_THROW_WITH(seq_join(pool, 4, items, square, options), InvalidArgument, "seq_join_grain");
    options.grain = 0;
    EXPECT_THROW_WITH(seq_join(pool, 4, items, square, options), InvalidArgument, "seq_join_grain");
}

TEST(SeqJoin, AMovedFromJoinRefusesToBeUsed) {
    ThreadPool pool(ThreadPool::Config{1});
    std::vector<int> const items{1, 2};
    auto join = seq_join(pool, 1, items, square);
    auto moved = std::move(join);
    EXPECT_THROW_WITH(join.next(), InvalidArgument, "moved from");  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(moved.next(), 1);
}

TEST(SeqJoin, ReadsItsOptions) {
    Options options;
    options.set("seq_join_grain", "8").set("seq_join_prefetch", "16").set("seq_join_stall_timeout", "2s");
    SeqJoinOptions const read = SeqJoinOptions::from_options(options);
    EXPECT_EQ(read.grain, 8u);
    EXPECT_EQ(read.prefetch, 16u);
    EXPECT_EQ(read.stall_timeout, 2s);
    SeqJoinOptions const defaults = SeqJoinOptions::from_options(Options());
    EXPECT_EQ(defaults.grain, 1u);
    EXPECT_EQ(defaults.prefetch, 0u);
    EXPECT_EQ(defaults.stall_timeout, 0s);
    EXPECT_THROW_WITH(SeqJoinOptions::from_options(Options().set("seq_join_grain", "0")), InvalidArgument,
                      "seq_join_grain");
}

TEST(SeqJoin, ReachesTheWindowAndNeverExceedsIt) {
    constexpr std::size_t window = 4;
    // Twice the window in threads, so that threads do not bound the items
    // in flight.
    ThreadPool pool(ThreadPool::Config{2 * window});
    test::Rendezvous first_window(window);
    test::ConcurrencyTracker inside;
    std::atomic<bool> met{true};
    auto fn = [&](int item, std::stop_token const&) {
        test::ConcurrencyTracker::Scope scope(inside);
        // The first `window` items can only all arrive if they run at once.
        if (item < static_cast<int>(window) && !first_window.arrive_and_wait()) {
            met = false;
        }
        return item;
    };
    // With prefetching the source runs ahead of the window, so only the
    // window itself bounds the items that start.
    SeqJoinOptions options;
    options.prefetch = window;
    int expected = 0;
    for (int result : seq_join(pool, window, std::views::iota(0, 200), fn, options)) {
        EXPECT_EQ(result, expected++);
    }
    EXPECT_TRUE(met.load());
    EXPECT_EQ(inside.peak(), window);
}

TEST(SeqJoin, ResultsNotYetTakenCountTowardTheWindowSoASlowConsumerHoldsBackTheSource) {
    // On a deterministic executor with threads to spare: once the consumer
    // has taken `taken` results and stops asking, running everything the
    // join posted starts exactly the items below `taken + window`, whatever
    // the schedule.
    constexpr std::size_t window = 4;
    for (std::uint64_t seed = 0; seed < 50; ++seed) {
        test::RandomChooser chooser(seed);
        test::DeterministicExecutor executor(chooser, 4 * window);
        int started = 0;
        auto fn = [&](int item, std::stop_token const&) {
            ++started;
            return item;
        };
        auto join = seq_join(executor, window, std::views::iota(0, 1000), fn);
        for (int taken = 1; taken <= 3; ++taken) {
            EXPECT_EQ(join.next(), taken - 1);
            executor.run_until_idle();
            EXPECT_EQ(started, taken + static_cast<int>(window)) << "seed " << seed << ", " << taken << " taken";
        }
    }
}

TEST(SeqJoin, WaitingItemsHoldNoThreadSoTheWholeWindowIsInFlightOnTwoThreads) {
    constexpr std::size_t window = 64;
    ThreadPool pool(ThreadPool::Config{2});
    Event all_in_flight(pool);
    std::atomic<std::size_t> in_flight{0};
    std::atomic<std::size_t> peak{0};
    auto fn = [&](std::size_t item, std::stop_token const& stop) -> Task<std::size_t> {
        std::size_t const now = ++in_flight;
        std::size_t seen = peak.load();
        while (seen < now && !peak.compare_exchange_weak(seen, now)) {
        }
        if (now == window) {
            all_in_flight.set();
        }
        co_await all_in_flight.wait(stop);
        --in_flight;
        co_return item;
    };
    SeqJoinOptions options;
    options.prefetch = window;
    std::atomic<std::size_t> taken{0};
    std::atomic<bool> bounded{true};
    options.observer = [&](ItemEvent const& event) {
        // Item k may start once item k - window has been taken. The consumer
        // counts a result only after next() returns it, one step after the
        // join does, hence the + 1.
        if (event.phase == ItemEvent::Phase::started && event.index >= taken.load() + window + 1) {
            bounded = false;
        }
    };
    test::Watchdog watchdog("a window of waiting items on two threads");
    auto join = seq_join(pool, window, std::views::iota(std::size_t{0}, std::size_t{1000}), fn, options);
    while (std::optional<std::size_t> result = join.next()) {
        EXPECT_EQ(*result, taken.load());
        ++taken;
    }
    EXPECT_EQ(peak.load(), window);
    EXPECT_TRUE(bounded.load());
}

TEST(SeqJoin, GrainRunsConsecutiveItemsOnOneThreadInOrder) {
    ThreadPool pool(ThreadPool::Config{2});
    std::vector<std::thread::id> ran_on(64);
    SeqJoinOptions options;
    options.grain = 4;
    options.observer = [&](ItemEvent const& event) {
        if (event.phase == ItemEvent::Phase::started) {
            ran_on[event.index] = std::this_thread::get_id();
        }
    };
    auto join = seq_join(pool, 8, std::views::iota(0, 64), square, options);
    int expected = 0;
    for (int result : join) {
        EXPECT_EQ(result, expected * expected);
        ++expected;
    }
    for (std::size_t batch = 0; batch < 64; batch += 4) {
        for (std::size_t i = batch + 1; i < batch + 4; ++i) {
            EXPECT_EQ(ran_on[i], ran_on[batch]) << "item " << i;
        }
    }
}

TEST(SeqJoin, PrefetchKeepsTheSourcePulledWhileTheConsumerIsBusy) {
    for (std::size_t prefetch : {0, 5}) {
        test::RandomChooser chooser(prefetch);
        test::DeterministicExecutor executor(chooser);
        std::size_t pulls = 0;
        auto generator = [&]() -> std::optional<std::size_t> { return pulls < 100 ? std::optional(pulls++) : std::nullopt; };
        SeqJoinOptions options;
        options.prefetch = prefetch;
        auto join = seq_join(executor, 3, generator, [](std::size_t item, std::stop_token const&) { return item; }, options);
        EXPECT_EQ(join.next(), 0u);
        // The consumer is busy; the executor's threads run what they can.
        executor.run_until_idle();
        EXPECT_EQ(pulls, 1 + 3 + prefetch) << "prefetch " << prefetch;
        for (std::size_t i = 1; i < 100; ++i) {
            EXPECT_EQ(join.next(), i);
        }
        EXPECT_FALSE(join.next().has_value());
    }
}

TEST(SeqJoin, ASourceErrorSurfacesAtItsPosition) {
    ThreadPool pool(ThreadPool::Config{2});
    int pulled = 0;
    auto generator = [&]() -> std::optional<int> {
        if (pulled == 3) {
            throw std::runtime_error("source broke");
        }
        return pulled++;
    };
    auto join = seq_join(pool, 2, generator, square);
    EXPECT_EQ(join.next(), 0);
    EXPECT_EQ(join.next(), 1);
    EXPECT_EQ(join.next(), 4);
    EXPECT_THROW_WITH(join.next(), std::runtime_error, "source broke");
}

TEST(SeqJoin, TheObserverSeesEveryItemStartAndFinishOnItsThread) {
    ThreadPool pool(ThreadPool::Config{2});
    Mutex mutex;
    std::vector<std::thread::id> started(50);
    std::vector<std::thread::id> finished(50);
    SeqJoinOptions options;
    options.observer = [&](ItemEvent const& event) {
        MutexLock lock(mutex);
        (event.phase == ItemEvent::Phase::started ? started : finished)[event.index] = std::this_thread::get_id();
    };
    auto fn = [&](int item, std::stop_token const&) -> Task<int> {
        co_await pool.schedule();
        co_return item;
    };
    for (int result : seq_join(pool, 8, std::views::iota(0, 50), fn, options)) {
        static_cast<void>(result);
    }
    for (std::size_t i = 0; i < 50; ++i) {
        EXPECT_NE(started[i], std::thread::id());
        EXPECT_NE(finished[i], std::thread::id());
    }
}

TEST(SeqJoin, DetectsAStallOnRealThreadsAndNamesThePendingItems) {
    ThreadPool pool(ThreadPool::Config{2});
    Event released(pool);
    std::vector<StallReport> reports;
    Mutex mutex;
    SeqJoinOptions options;
    // Long enough that items 1 and 2 have finished by the first report even
    // on a loaded machine: the report then names item 0 alone.
    options.stall_timeout = 250ms;
    options.on_stall = [&](StallReport const& report) {
        {
            MutexLock lock(mutex);
            reports.push_back(report);
        }
        released.set();
    };
    // Item 0 waits for item 3, three places later, with a window of 3: it
    // can never start.
    auto fn = [&](int item, std::stop_token const& stop) -> Task<int> {
        if (item == 3) {
            released.set();
        }
        if (item == 0) {
            co_await released.wait(stop);
        }
        co_return item;
    };
    test::Watchdog watchdog("a stalled seq_join");
    std::vector<int> results;
    for (int result : seq_join(pool, 3, std::views::iota(0, 6), fn, options)) {
        results.push_back(result);
    }
    EXPECT_EQ(results, (std::vector<int>{0, 1, 2, 3, 4, 5}));
    MutexLock lock(mutex);
    ASSERT_FALSE(reports.empty());
    EXPECT_EQ(reports.front().next_to_consume, 0u);
    EXPECT_EQ(reports.front().running, std::vector<std::size_t>{0});
    std::string const message = reports.front().to_string();
    EXPECT_NE(message.find("waits for item 0"), std::string::npos) << message;
    EXPECT_NE(message.find("running: 0"), std::string::npos) << message;
    EXPECT_NE(message.find("widen the window"), std::string::npos) << message;
}

TEST(SeqJoin, NestedJoinsOnAOneThreadPoolDoNotDeadlock) {
    test::Watchdog watchdog("nested seq_join on one thread");
    ThreadPool pool(ThreadPool::Config{1});
    auto outer = [&](int item, std::stop_token const&) {
        int sum = 0;
        for (int inner : seq_join(pool, 2, std::views::iota(0, item), square)) {
            sum += inner;
        }
        return sum + static_cast<int>(parallel_join(pool, std::vector<std::function<int(std::stop_token const&)>>(
                                                               2, [](std::stop_token const&) { return 1; }))
                                          .size());
    };
    std::vector<int> results;
    for (int result : seq_join(pool, 3, std::views::iota(0, 6), outer)) {
        results.push_back(result);
    }
    EXPECT_EQ(results, (std::vector<int>{2, 2, 3, 7, 16, 32}));
}

// An item still running after the join is destroyed would be counted in
// `running`, and under ASan would also read the freed vector.
TEST(SeqJoin, BorrowedDataMayBeFreedRightAfterTheJoinIsDestroyed) {
    test::Watchdog watchdog("destroying a seq_join early");
    ThreadPool pool(ThreadPool::Config{2});
    std::atomic<int> running{0};
    for (int round = 0; round < 20; ++round) {
        auto borrowed = std::make_unique<std::vector<int>>(64, 1);
        {
            auto fn = [&pool, &data = *borrowed, &running](int item, std::stop_token const& stop) -> Task<int> {
                ++running;
                co_await pool.sleep_for(std::chrono::microseconds(50 * (item % 5)), stop);
                co_await pool.schedule();
                auto const value = data[static_cast<std::size_t>(item % 64)] + item;
                --running;
                co_return value;
            };
            // Some synchronous items are still busy when the join goes. They
            // give up after a while on their own: the consumer, waiting in
            // next(), may run one of them itself, and then no stop request
            // could come from it.
            auto sync_fn = [&data = *borrowed, &running](int item, std::stop_token const& stop) {
                ++running;
                auto const give_up = std::chrono::steady_clock::now() + 20ms;
                while (item % 4 == 3 && !stop.stop_requested() && std::chrono::steady_clock::now() < give_up) {
                    std::this_thread::yield();
                }
                auto const value = data[static_cast<std::size_t>(item % 64)];
                --running;
                return value;
            };
            auto join = seq_join(pool, 16, std::views::iota(0, 1000), fn);
            auto sync_join = seq_join(pool, 4, std::views::iota(1, 1000), sync_fn);
            for (int i = 0; i < round; ++i) {
                EXPECT_EQ(join.next(), 1 + i);
            }
            EXPECT_EQ(sync_join.next(), 1);
        }
        EXPECT_EQ(running.load(), 0) << "round " << round << ": an item outlived its join";
        borrowed.reset();
    }
}

TEST(SeqJoin, AMillionItemsWithRandomSleepsComeOutInOrder) {
    test::Watchdog watchdog("a million items", std::chrono::seconds(240));
    ThreadPool pool(ThreadPool::Config{2});
    constexpr std::size_t items = 1'000'000;
    auto fn = [&pool](std::size_t item, std::stop_token const& stop) -> Task<std::size_t> {
        // A cheap hash decides: most items finish at once, some hop to
        // another thread, a few sleep on a timer for up to 100 us.
        std::size_t const mixed = (item * 0x9E3779B97F4A7C15ull) >> 40;
        if (mixed % 64 == 0) {
            co_await pool.sleep_for(std::chrono::microseconds(mixed % 100), stop);
        } else if (mixed % 8 == 0) {
            co_await pool.schedule();
        }
        co_return item;
    };
    std::size_t expected = 0;
    for (std::size_t result : seq_join(pool, 256, std::views::iota(std::size_t{0}, items), fn)) {
        if (result != expected) {
            ADD_FAILURE() << "result " << result << " at position " << expected;
            break;
        }
        ++expected;
    }
    EXPECT_EQ(expected, items);
}
