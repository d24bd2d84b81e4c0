#include <spillway/core/deadline.hpp>
#include <spillway/core/mutex.hpp>

#include <common/rendezvous.hpp>

#include <thread>

#include <gtest/gtest.h>

using namespace spillway;
using namespace std::chrono_literals;

TEST(CondVar, WakesAWaiterWhenThePredicateBecomesTrue) {
    // The waiter holds the mutex before the producer starts, so the producer
    // gets it only once `wait` has released it: the waiter is asleep when
    // `ready` changes, and only the notification can wake it.
    Mutex mutex;
    CondVar changed;
    bool ready = false;
    int checks = 0;
    std::thread producer;
    {
        MutexLock lock(mutex);
        producer = std::thread([&] {
            MutexLock producer_lock(mutex);
            ready = true;
            changed.notify_all();
        });
        changed.wait(lock, [&] {
            ++checks;
            return ready;
        });
        EXPECT_TRUE(ready);
        EXPECT_GE(checks, 2) << "the waiter never slept";
    }
    producer.join();
}

TEST(CondVar, WaitForGivesUpAfterTheTimeout) {
    Mutex mutex;
    CondVar never;
    MutexLock lock(mutex);
    EXPECT_FALSE(never.wait_for(lock, 1ms, [] { return false; }));
}

TEST(CondVar, WaitForTheLongestTimeoutWaitsForThePredicate) {
    // Waiting adds the timeout to the clock's time: unsaturated, the
    // deadline overflowed into the past and the wait gave up at once.
    Mutex mutex;
    CondVar changed;
    bool ready = false;
    std::thread producer([&] {
        std::this_thread::sleep_for(20ms);
        MutexLock producer_lock(mutex);
        ready = true;
        changed.notify_all();
    });
    {
        MutexLock lock(mutex);
        EXPECT_TRUE(changed.wait_for(lock, std::chrono::hours::max(), [&] { return ready; }));
    }
    producer.join();
}

TEST(CondVar, WaitForTakesDurationsOfAnyType) {
    Mutex mutex;
    CondVar never;
    MutexLock lock(mutex);
    EXPECT_FALSE(never.wait_for(lock, std::chrono::duration<double>(0.001), [] { return false; }));
    EXPECT_FALSE(never.wait_for(lock, std::chrono::duration<double, std::pico>(10), [] { return false; }));
}

TEST(Deadline, SaturatesAtTheClocksEnd) {
    auto const now = std::chrono::steady_clock::now();
    EXPECT_EQ(deadline_after(now, 5s), now + 5s);
    EXPECT_EQ(deadline_after(now, -5s), now);
    EXPECT_EQ(deadline_after(now, std::chrono::nanoseconds::max()), std::chrono::steady_clock::time_point::max());
    EXPECT_EQ(deadline_after(now, std::chrono::steady_clock::time_point::max() - now),
              std::chrono::steady_clock::time_point::max());
}

TEST(MutexLock, ReleasesAMutexItAdoptedFromTryLock) {
    Mutex mutex;
    ASSERT_TRUE(mutex.try_lock());
    {
        MutexLock const adopted(mutex, std::adopt_lock);
        std::jthread([&] { EXPECT_FALSE(mutex.try_lock()); }).join();
    }
    EXPECT_TRUE(mutex.try_lock());
    mutex.unlock();
}

TEST(SharedMutex, AdmitsReadersTogether) {
    SharedMutex mutex;
    test::Rendezvous both_inside(2);
    bool met[2] = {false, false};
    auto reader = [&](int index) {
        ReaderLock lock(mutex);
        met[index] = both_inside.arrive_and_wait();
    };
    std::thread first(reader, 0);
    std::thread second(reader, 1);
    first.join();
    second.join();
    EXPECT_TRUE(met[0] && met[1]);
}
