#include <spillway/memory/spill_manager.hpp>

#include <common/error_matchers.hpp>
#include <common/event.hpp>
#include <common/rendezvous.hpp>
#include <common/temporary_directory.hpp>
#include <common/thread_state.hpp>
#include <common/watchdog.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <future>
#include <limits>
#include <list>
#include <random>
#include <thread>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/memory/buffer_resource.hpp>
#include <spillway/memory/spillable_store.hpp>

#include <gtest/gtest.h>

#include "memory_test_support.hpp"

using namespace spillway;
using namespace spillway::memory;
using namespace spillway::test;
using namespace std::chrono_literals;

namespace {

/// A spill function that frees nothing and reports `amount` as freed.
std::size_t pretend(std::size_t amount) {
    return amount;
}

/// The threads of this process. A thread just joined may stay listed for a
/// moment after `join` returns: the count is read until two reads 20 ms apart
/// agree.
std::size_t thread_count() {
    auto const listed = [] {
        auto const tasks = std::filesystem::directory_iterator("/proc/self/task");
        return static_cast<std::size_t>(std::distance(begin(tasks), end(tasks)));
    };
    for (auto count = listed();;) {
        std::this_thread::sleep_for(20ms);
        auto const again = listed();
        if (again == count) {
            return count;
        }
        count = again;
    }
}

/// Whether a second spill() caller enters a spill function while a first one
/// is inside one (registered as in `two_callers_meet_inside_spill`). The
/// first stays inside until the second has either entered too or blocked in
/// the kernel, waiting: so the answer does not depend on timing when the
/// second must wait.
bool second_caller_enters_while_first_is_inside(SpillMode mode, std::vector<SpillConcurrency> const& functions) {
    TemporaryDirectory root;
    auto config = test_config(root);
    config.spill_mode = mode;
    BufferResource resource(config);
    auto& manager = resource.spill_manager();
    Event first_inside;
    Event release;
    std::atomic<int> inside{0};
    std::atomic<bool> met{false};
    auto const entering = [&](std::size_t amount) {
        if (inside++ == 0) {
            first_inside.set();
            EXPECT_TRUE(release.wait(std::chrono::seconds(60)));
        } else {
            met = true;
        }
        --inside;
        return amount;
    };
    std::list<ScopedSpillFunction> registered;
    for (auto const concurrency : functions) {
        auto const priority = -static_cast<int>(registered.size());
        registered.emplace_back(resource, entering, priority, concurrency);
    }
    std::thread one([&] { manager.spill(10); });
    EXPECT_TRUE(first_inside.wait(std::chrono::seconds(60)));
    std::atomic<pid_t> second_tid{0};
    std::thread two([&] {
        second_tid = static_cast<pid_t>(::gettid());
        manager.spill(10);
    });
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!met && !(second_tid != 0 && thread_blocked(second_tid)) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
    }
    bool const entered = met;
    release.set();
    one.join();
    two.join();
    return entered;
}

/// Whether two spill() callers are inside spill functions at the same time,
/// waiting at most `timeout` for each other. One function is registered per
/// entry of `functions`, with that concurrency, in decreasing priority.
bool two_callers_meet_inside_spill(
    SpillMode mode, std::vector<SpillConcurrency> const& functions, std::chrono::milliseconds timeout
) {
    TemporaryDirectory root;
    auto config = test_config(root);
    config.spill_mode = mode;
    BufferResource resource(config);
    auto& manager = resource.spill_manager();
    Rendezvous inside(2);
    std::atomic<int> met{0};
    auto const meeting = [&](std::size_t amount) {
        met += inside.arrive_and_wait(timeout) ? 1 : 0;
        return amount;
    };
    std::list<ScopedSpillFunction> registered;
    for (auto const concurrency : functions) {
        auto const priority = -static_cast<int>(registered.size());
        registered.emplace_back(resource, meeting, priority, concurrency);
    }
    std::thread one([&] { manager.spill(10); });
    std::thread two([&] { manager.spill(10); });
    one.join();
    two.join();
    return met == 2;
}

}  // namespace

TEST(SpillManager, CallsFunctionsInPriorityOrderUntilTheAmountIsMet) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    auto& manager = resource.spill_manager();
    std::vector<std::string> calls;
    auto const recording = [&](std::string name) {
        return [&calls, name](std::size_t) {
            calls.push_back(name);
            return std::size_t{10};
        };
    };
    std::vector<SpillManager::SpillFunctionId> ids{
        manager.add_spill_function(recording("low"), 0),
        manager.add_spill_function(recording("high"), 10),
        manager.add_spill_function(recording("middle"), 5),
        manager.add_spill_function(recording("high too"), 10),
    };
    EXPECT_EQ(manager.spill(25), 30U);
    EXPECT_EQ(calls, (std::vector<std::string>{"high", "high too", "middle"}));
    calls.clear();
    EXPECT_EQ(manager.spill(1000), 40U);
    EXPECT_EQ(calls, (std::vector<std::string>{"high", "high too", "middle", "low"}));
    for (auto const id : ids) {
        manager.remove_spill_function(id);
    }
    EXPECT_EQ(manager.spill(10), 0U);
}

TEST(SpillManager, AsksEachFunctionForWhatIsStillMissing) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    auto& manager = resource.spill_manager();
    std::vector<std::size_t> asked;
    auto const asking = [&](std::size_t amount) {
        asked.push_back(amount);
        return std::size_t{30};
    };
    ScopedSpillFunction const first(resource, asking, 1);
    ScopedSpillFunction const second(resource, asking, 0);
    EXPECT_EQ(manager.spill(50), 60U);
    EXPECT_EQ(asked, (std::vector<std::size_t>{50, 20}));
    EXPECT_EQ(resource.statistics().get("memory.spill.bytes")->total, 60.0);
}

constexpr auto exclusive = SpillConcurrency::exclusive;
constexpr auto shared = SpillConcurrency::shared;

TEST(SpillManager, TwoCallersSpillFromTwoFunctionsAtTheSameTime) {
    EXPECT_TRUE(two_callers_meet_inside_spill(SpillMode::concurrent, {exclusive, exclusive}, 10s))
        << "the second spill() caller never entered a free spill function while the first was inside "
           "another: spill() is serialized";
}

TEST(SpillManager, TheSerializedModeAdmitsOneCallerAtATime) {
    // So the rendezvous test above would fail on it, with its message, after
    // its timeout, instead of hanging; and the second caller waits.
    EXPECT_FALSE(two_callers_meet_inside_spill(SpillMode::serialized, {exclusive, exclusive}, 200ms));
    EXPECT_FALSE(second_caller_enters_while_first_is_inside(SpillMode::serialized, {exclusive, exclusive}));
    EXPECT_TRUE(second_caller_enters_while_first_is_inside(SpillMode::concurrent, {exclusive, exclusive}))
        << "the check above can tell a caller that waits from one that enters";
}

TEST(SpillManager, TwoCallersRunOneSharedFunctionAtTheSameTime) {
    EXPECT_TRUE(two_callers_meet_inside_spill(SpillMode::concurrent, {shared}, 10s))
        << "the second spill() caller never entered the shared spill function while the first was "
           "inside it: its calls are serialized";
}

TEST(SpillManager, TwoCallersNeverRunOneExclusiveFunctionAtTheSameTime) {
    // The test above, with the function registered exclusive: the second
    // caller skips it, then waits for it, so the callers never meet.
    EXPECT_FALSE(second_caller_enters_while_first_is_inside(SpillMode::concurrent, {exclusive}));
    EXPECT_TRUE(second_caller_enters_while_first_is_inside(SpillMode::concurrent, {shared}));
}

TEST(SpillManager, RevisitsSkippedFunctionsUntilTheAmountIsMet) {
    // The seed's objection: caller 1 holds the function with lots to spill for
    // a small request; caller 2 needs much more, skips it, gets little from the
    // next function, and must come back to the first rather than under-spill.
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    auto& manager = resource.spill_manager();
    Event first_caller_inside;
    Event little_was_asked;
    std::atomic<int> lots_calls{0};
    ScopedSpillFunction const lots(
        resource,
        [&](std::size_t amount) {
            if (++lots_calls == 1) {
                first_caller_inside.set();
                EXPECT_TRUE(little_was_asked.wait()) << "the second caller waited instead of skipping";
            }
            return amount;
        },
        1
    );
    ScopedSpillFunction const little(resource, [&](std::size_t amount) {
        little_was_asked.set();
        return std::min<std::size_t>(amount, 10);
    });
    Watchdog watchdog("skip and revisit");
    std::thread first([&] { EXPECT_EQ(manager.spill(5), 5U); });
    ASSERT_TRUE(first_caller_inside.wait());
    EXPECT_EQ(manager.spill(100), 100U) << "the skipped function was not revisited";
    first.join();
    EXPECT_EQ(lots_calls, 2);
}

TEST(SpillManager, RemoveWaitsUntilTheFunctionReturnsAndItIsNeverCalledAgain) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    auto& manager = resource.spill_manager();
    Event entered;
    Event remove_started;
    std::atomic<bool> remove_returned{false};
    std::atomic<bool> returned_while_running{false};
    std::atomic<int> calls{0};
    auto const id = manager.add_spill_function(
        [&](std::size_t amount) {
            ++calls;
            entered.set();
            EXPECT_TRUE(remove_started.wait());
            // Give a remove that does not drain every chance to return now.
            for (int i = 0; i < 200 && !returned_while_running; ++i) {
                returned_while_running = remove_returned.load();
                std::this_thread::sleep_for(1ms);
            }
            return amount;
        },
        0
    );
    Watchdog watchdog("drain on remove");
    std::thread spiller([&] { manager.spill(10); });
    ASSERT_TRUE(entered.wait());
    std::thread remover([&] {
        remove_started.set();
        manager.remove_spill_function(id);
        remove_returned = true;
    });
    remover.join();
    spiller.join();
    EXPECT_FALSE(returned_while_running) << "remove_spill_function returned while the function ran";
    EXPECT_EQ(manager.spill(10), 0U);
    EXPECT_EQ(calls, 1);
}

TEST(SpillManager, NoFunctionIsEnteredAfterItsRemovalReturnsWhileOthersSpill) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    auto& manager = resource.spill_manager();
    constexpr int function_count = 8;
    std::array<std::atomic<bool>, function_count> removed{};
    std::atomic<int> entered_after_removal{0};
    std::atomic<int> calls{0};
    std::vector<SpillManager::SpillFunctionId> ids;
    for (int i = 0; i < function_count; ++i) {
        ids.push_back(manager.add_spill_function(
            [&, i](std::size_t amount) {
                entered_after_removal += removed[i] ? 1 : 0;
                ++calls;
                return amount / 4;
            },
            i % 3
        ));
    }
    std::atomic<bool> stop{false};
    std::vector<std::thread> spillers;
    for (int t = 0; t < 3; ++t) {
        spillers.emplace_back([&] {
            while (!stop) {
                manager.spill(1000);
            }
        });
    }
    Watchdog watchdog("removal under concurrent spilling");
    for (int i = 0; i < function_count; ++i) {
        // Let the spillers run the remaining functions before each removal.
        for (int const seen = calls; calls < seen + 20;) {
            std::this_thread::yield();
        }
        manager.remove_spill_function(ids[i]);
        removed[i] = true;
    }
    stop = true;
    for (auto& spiller : spillers) {
        spiller.join();
    }
    EXPECT_EQ(entered_after_removal, 0);
}

TEST(SpillManager, AnExceptionReachesTheCallerAndLeavesTheRegistryIntact) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 4 * mebibyte));
    BufferPile pile(resource, 4, mebibyte);
    auto& manager = resource.spill_manager();
    std::atomic<int> throwing_calls{0};
    std::atomic<int> next_calls{0};
    ScopedSpillFunction const throwing(
        resource,
        [&](std::size_t amount) -> std::size_t {
            if (++throwing_calls % 2 == 1) {
                throw IoError("disk on fire");
            }
            return pile.spill(amount);
        },
        1
    );
    ScopedSpillFunction const next(resource, [&](std::size_t amount) {
        ++next_calls;
        return amount;
    });
    EXPECT_THROW_WITH(manager.spill(10), IoError, "disk on fire");
    EXPECT_EQ(next_calls, 0);
    EXPECT_EQ(manager.spill(10), mebibyte) << "the function is no longer busy after throwing";
    EXPECT_EQ(throwing_calls, 2);

    // A failed headroom request returns its claim, so a later one spills again.
    auto overbooked = resource.reserve(MemoryType::HOST, 2 * mebibyte, AllowOverbooking::yes);
    EXPECT_THROW_WITH(manager.spill_to_make_headroom(0), IoError, "disk on fire");
    auto const result = manager.spill_to_make_headroom(0);
    EXPECT_TRUE(result.reached);
    EXPECT_EQ(result.spilled, mebibyte);
}

TEST(SpillManager, ReentrantCallsFromASpillFunctionAreRejectedInsteadOfDeadlocking) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    auto& manager = resource.spill_manager();
    std::vector<std::function<void()>> const reentrant_calls{
        [&] { manager.spill(1); },
        [&] { manager.spill_to_make_headroom(1); },
        [&] { manager.add_spill_function(pretend, 0); },
        [&] { manager.remove_spill_function(0); },
        [&] { static_cast<void>(resource.reserve_and_spill(MemoryType::HOST, 1ULL << 40, AllowOverbooking::no)); },
    };
    Watchdog watchdog("re-entrant spill calls");
    for (auto const& call : reentrant_calls) {
        ScopedSpillFunction const reentrant(resource, [&](std::size_t amount) {
            call();
            return amount;
        });
        EXPECT_THROW_WITH(manager.spill(10), InvalidArgument, "called from inside a spill function");
    }
}

TEST(SpillManager, ASpillFunctionCannotSpillThroughAnotherManager) {
    // Spill functions of two managers that spill each other would wait for
    // each other, so a spill function may spill through no manager at all.
    TemporaryDirectory root;
    BufferResource outer(test_config(root));
    BufferResource inner(test_config(root));
    ScopedSpillFunction const inner_function(inner, pretend);
    std::vector<std::function<void()>> const calls{
        [&] { inner.spill_manager().spill(1); },
        [&] { inner.spill_manager().spill_to_make_headroom(1); },
        [&] { static_cast<void>(inner.reserve_and_spill(MemoryType::HOST, 1ULL << 40, AllowOverbooking::no)); },
    };
    Watchdog watchdog("spill calls into another manager");
    for (auto const& call : calls) {
        ScopedSpillFunction const outer_function(outer, [&](std::size_t amount) {
            call();
            return amount;
        });
        EXPECT_THROW_WITH(outer.spill_manager().spill(10), InvalidArgument, "called from inside a spill function");
    }
}

TEST(SpillManager, ASpillFunctionMayReserveWithoutSpillingAndChangeAnotherManagersFunctions) {
    TemporaryDirectory root;
    BufferResource outer(test_config(root));
    BufferResource inner(test_config(root));
    ScopedSpillFunction const outer_function(outer, [&](std::size_t amount) {
        auto const reservation = inner.reserve_and_spill(MemoryType::HOST, 1, AllowOverbooking::no);
        auto const id = inner.spill_manager().add_spill_function(pretend, 0);
        inner.spill_manager().remove_spill_function(id);
        return amount;
    });
    EXPECT_EQ(outer.spill_manager().spill(10), 10U);
}

class SpillFunctionsOfTwoManagersCallingEachOther : public ::testing::TestWithParam<SpillConcurrency> {};

TEST_P(SpillFunctionsOfTwoManagersCallingEachOther, AreRejectedInsteadOfDeadlockingOrRecursing) {
    // A's function spills B, whose function spills A: with exclusive
    // functions the second call of A's waited for the first, forever; with
    // shared ones the calls recursed until the stack overflowed.
    TemporaryDirectory root;
    BufferResource first(test_config(root));
    BufferResource second(test_config(root));
    ScopedSpillFunction const first_function(
        first, [&](std::size_t amount) { return second.spill_manager().spill(amount); }, 0, GetParam()
    );
    ScopedSpillFunction const second_function(
        second, [&](std::size_t amount) { return first.spill_manager().spill(amount); }, 0, GetParam()
    );
    Watchdog watchdog("spill functions of two managers calling each other");
    EXPECT_THROW_WITH(first.spill_manager().spill(10), InvalidArgument, "called from inside a spill function");
    EXPECT_THROW_WITH(
        second.spill_manager().spill_to_make_headroom(1ULL << 40), InvalidArgument,
        "called from inside a spill function"
    );
}

INSTANTIATE_TEST_SUITE_P(
    SpillManager, SpillFunctionsOfTwoManagersCallingEachOther, ::testing::Values(exclusive, shared),
    [](auto const& param_info) { return param_info.param == exclusive ? std::string("Exclusive") : std::string("Shared"); }
);

TEST(SpillManager, TwoThreadsInsideFunctionsOfTwoManagersCannotSpillEachOther) {
    // Thread 1 inside A's function spills B while thread 2 inside B's
    // function spills A: each waited for the other's busy function.
    TemporaryDirectory root;
    BufferResource first(test_config(root));
    BufferResource second(test_config(root));
    Rendezvous both_inside(2);
    auto const spilling_the_other = [&](BufferResource& other) {
        return [&](std::size_t amount) {
            EXPECT_TRUE(both_inside.arrive_and_wait());
            return other.spill_manager().spill(amount);
        };
    };
    ScopedSpillFunction const first_function(first, spilling_the_other(second));
    ScopedSpillFunction const second_function(second, spilling_the_other(first));
    Watchdog watchdog("two threads spilling each other's manager");
    auto const spill = [](BufferResource& resource) {
        return std::async(std::launch::async, [&resource] { return resource.spill_manager().spill(10); });
    };
    auto one = spill(first);
    auto two = spill(second);
    EXPECT_THROW_WITH(one.get(), InvalidArgument, "called from inside a spill function");
    EXPECT_THROW_WITH(two.get(), InvalidArgument, "called from inside a spill function");
}

TEST(SpillManager, RejectsUnknownIdsAndEmptyFunctions) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    EXPECT_THROW_WITH(resource.spill_manager().remove_spill_function(42), InvalidArgument, "no spill function has id 42");
    EXPECT_THROW_WITH(resource.spill_manager().add_spill_function({}, 0), InvalidArgument, "callable");
}

TEST(SpillManager, ThePeriodicThreadSpillsOverbookedMemoryBackUnderTheLimit) {
    TemporaryDirectory root;
    auto config = test_config(root, 10 * mebibyte);
    config.spill_interval = 1ms;
    BufferResource resource(config);
    BufferPile pile(resource, 10, mebibyte);
    ScopedSpillFunction const spilling(resource, [&](std::size_t amount) { return pile.spill(amount); });
    auto overbooked = resource.reserve(MemoryType::HOST, 3 * mebibyte, AllowOverbooking::yes);
    for (int i = 0; i < 10'000 && resource.memory_available(MemoryType::HOST) < 0; ++i) {
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), 0);
    EXPECT_EQ(pile.count(), 7U);
}

TEST(SpillManager, ThePeriodicThreadKeepsTheConfiguredHeadroom) {
    TemporaryDirectory root;
    auto config = test_config(root, 10 * mebibyte);
    config.spill_interval = 1ms;
    config.spill_headroom = 4 * mebibyte;
    BufferResource resource(config);
    BufferPile pile(resource, 10, mebibyte);
    ScopedSpillFunction const spilling(resource, [&](std::size_t amount) { return pile.spill(amount); });
    for (int i = 0; i < 10'000 && pile.count() > 6; ++i) {
        std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(pile.count(), 6U);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), 4 * static_cast<std::int64_t>(mebibyte));
}

TEST(SpillManager, DestroyingTheResourceStopsThePeriodicThreadPromptly) {
    TemporaryDirectory root;
    auto config = test_config(root);
    config.spill_interval = 1h;
    Watchdog watchdog("stopping a periodic spill thread with a one-hour interval", 30s);
    BufferResource resource(config);
}

TEST(SpillManager, ThereIsNoPeriodicThreadWhenTheIntervalIsZero) {
    TemporaryDirectory root;
    auto config = test_config(root);
    auto const threads_with = [&](std::chrono::nanoseconds interval) {
        config.spill_interval = interval;
        BufferResource resource(config);
        return thread_count();
    };
    // The process's first thread may start a runtime thread of its own
    // (ThreadSanitizer's, when this test runs alone): count after it.
    threads_with(1h);
    auto const before = thread_count();
    EXPECT_EQ(threads_with(0s), before);
    EXPECT_EQ(threads_with(1h), before + 1);
}


TEST(SpillManager, AHeadroomNoMemoryCanGiveSpillsEverythingAndIsNotReached) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 32 * mebibyte));
    BufferPile pile(resource, 4, mebibyte);
    ScopedSpillFunction const spilling(resource, [&](std::size_t amount) { return pile.spill(amount); });
    for (auto const headroom : {std::numeric_limits<std::size_t>::max(), std::size_t{1} << 63}) {
        auto const result = resource.spill_manager().spill_to_make_headroom(headroom);
        EXPECT_FALSE(result.reached) << headroom;
    }
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U) << "every spillable byte went to disk";
}

TEST(SpillManager, ConcurrentHeadroomRequestsSpillTheShortfallOnce) {
    // The first spill holds back until every other caller has asked for the
    // same headroom and blocked inside the manager: they find the shortfall
    // being spilled and must not spill it again.
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 32 * mebibyte));
    BufferPile pile(resource, 32, mebibyte);
    constexpr int callers = 4;
    Mutex mutex;
    std::vector<pid_t> waiting;
    std::atomic<int> first_call{0};
    std::atomic<bool> others_blocked{true};
    ScopedSpillFunction const spilling(resource, [&](std::size_t amount) {
        if (++first_call == 1) {
            auto const self = static_cast<pid_t>(::gettid());
            auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
            auto const all_blocked = [&] {
                MutexLock lock(mutex);
                return waiting.size() == callers
                       && std::ranges::all_of(waiting, [&](pid_t tid) { return tid == self || thread_blocked(tid); });
            };
            while (!all_blocked()) {
                if (std::chrono::steady_clock::now() > deadline) {
                    others_blocked = false;
                    break;
                }
                std::this_thread::yield();
            }
        }
        return pile.spill(amount);
    });
    std::vector<std::thread> threads;
    std::atomic<std::size_t> spilled{0};
    std::atomic<int> reached{0};
    for (int i = 0; i < callers; ++i) {
        threads.emplace_back([&] {
            {
                MutexLock lock(mutex);
                waiting.push_back(static_cast<pid_t>(::gettid()));
            }
            auto const result = resource.spill_manager().spill_to_make_headroom(8 * mebibyte);
            spilled += result.spilled;
            reached += result.reached ? 1 : 0;
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    EXPECT_TRUE(others_blocked.load()) << "the other callers never blocked while the first spilled";
    EXPECT_EQ(spilled, 8 * mebibyte) << "concurrent callers spilled the same shortfall more than once";
    EXPECT_EQ(reached, callers);
}

TEST(SpillManager, RandomizedStressKeepsEveryByteAndTheAccountingExact) {
    // Threads create and destroy stores (adding and removing spill functions),
    // insert buffers made with reserve_and_spill, extract and check them,
    // spill, and hold loose buffers, while the periodic thread runs too.
    TemporaryDirectory root;
    auto config = test_config(root, 2 * mebibyte);
    config.spill_interval = 1ms;
    BufferResource resource(config);
    constexpr int threads = 4;
    constexpr std::size_t max_size = 64 * 1024;
    auto const fill = [](Buffer& buffer, std::uint64_t key) {
        auto const data = buffer.data();
        for (std::size_t i = 0; i < data.size(); ++i) {
            data[i] = static_cast<std::byte>(key * 31 + i);
        }
    };
    auto const intact = [](Buffer const& buffer, std::uint64_t key) {
        auto const data = buffer.data();
        for (std::size_t i = 0; i < data.size(); ++i) {
            if (data[i] != static_cast<std::byte>(key * 31 + i)) {
                return false;
            }
        }
        return true;
    };
    Watchdog watchdog("randomized spill stress", 240s);
    std::vector<std::thread> workers;
    std::atomic<int> corrupt{0};
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            std::mt19937_64 random(static_cast<std::uint64_t>(t) + 1);
            std::list<std::pair<SpillableStore, std::vector<SpillableStore::Key>>> stores;
            std::uint64_t next_key = static_cast<std::uint64_t>(t) << 32;
            std::optional<Buffer> loose;
            for (int step = 0; step < 300; ++step) {
                switch (random() % 6) {
                case 0:
                    if (stores.size() < 3) {
                        stores.emplace_back(
                            std::piecewise_construct,
                            std::forward_as_tuple(resource, "stress", static_cast<int>(random() % 3)),
                            std::forward_as_tuple()
                        );
                    } else {
                        stores.pop_front();
                    }
                    break;
                case 1:
                case 2:
                    if (!stores.empty()) {
                        auto& [store, keys] = stores.back();
                        auto const size = random() % max_size;
                        auto reservation = resource.reserve_and_spill(MemoryType::HOST, size, AllowOverbooking::no);
                        auto buffer = resource.make_buffer(size, reservation);
                        fill(buffer, next_key);
                        store.insert(next_key, std::move(buffer));
                        keys.push_back(next_key++);
                    }
                    break;
                case 3:
                    if (!stores.empty() && !stores.front().second.empty()) {
                        auto& [store, keys] = stores.front();
                        auto const key = keys[random() % keys.size()];
                        std::erase(keys, key);
                        auto buffer = store.extract(key);
                        corrupt += buffer && intact(*buffer, key) ? 0 : 1;
                    }
                    break;
                case 4:
                    resource.spill_manager().spill(random() % (4 * max_size));
                    break;
                case 5: {
                    loose.reset();
                    auto const size = random() % max_size;
                    auto reservation = resource.reserve_and_spill(MemoryType::HOST, size, AllowOverbooking::no);
                    loose = resource.make_buffer(size, reservation);
                    break;
                }
                }
            }
        });
    }
    for (auto& worker : workers) {
        worker.join();
    }
    EXPECT_EQ(corrupt, 0);
    for (auto const tier : memory_types) {
        EXPECT_EQ(resource.memory_used(tier), 0U) << tier;
        EXPECT_EQ(resource.memory_reserved(tier), 0U) << tier;
    }
    EXPECT_GT(resource.statistics().get("stress.spill.bytes")->total, 0.0);
}

TEST(SpillManagerDeathTest, DestroyingTheResourceWithASpillFunctionRegisteredAborts) {
    EXPECT_DEATH(
        {
            TemporaryDirectory root;
            auto resource = std::make_unique<BufferResource>(test_config(root));
            resource->spill_manager().add_spill_function(pretend, 0);
            resource.reset();
        },
        "destroyed with 1 spill functions registered"
    );
}
