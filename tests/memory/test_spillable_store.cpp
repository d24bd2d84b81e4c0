#include <spillway/memory/spillable_store.hpp>

#include <common/error_matchers.hpp>
#include <common/event.hpp>
#include <common/fault_injecting_file_operations.hpp>
#include <common/rendezvous.hpp>
#include <common/temporary_directory.hpp>
#include <common/thread_state.hpp>
#include <common/watchdog.hpp>

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <future>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/core/trace.hpp>

#include <gtest/gtest.h>

#include "memory_test_support.hpp"

using namespace spillway;
using namespace spillway::memory;
using namespace spillway::test;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kibibyte = 1024;

/// The bytes spilled when `callers` threads, meeting first, each
/// `reserve_and_spill` `request` bytes of a HOST limit that `chunks` buffers
/// of `chunk` bytes in one store fill. Expects every request granted.
std::uint64_t spilled_by_requests_at_once(int callers, std::size_t request, std::size_t chunk, std::size_t chunks) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, chunks * chunk));
    SpillableStore store(resource, "test");
    for (std::size_t key = 0; key < chunks; ++key) {
        store.insert(key, host_buffer(resource, chunk));
    }
    Rendezvous start(static_cast<std::size_t>(callers));
    std::vector<MemoryReservation> reservations(static_cast<std::size_t>(callers));
    std::vector<std::thread> threads;
    for (auto& reservation : reservations) {
        threads.emplace_back([&] {
            EXPECT_TRUE(start.arrive_and_wait());
            reservation = resource.reserve_and_spill(MemoryType::HOST, request, AllowOverbooking::no);
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    for (auto const& reservation : reservations) {
        EXPECT_EQ(reservation.size(), request);
    }
    EXPECT_LE(resource.memory_available(MemoryType::HOST), static_cast<std::int64_t>(chunk));
    return store.bytes(MemoryType::DISK);
}


}  // namespace

TEST(SpillableStore, ReturnsTheBuffersItWasGivenByKey) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    {
        SpillableStore store(resource, "test");
        auto const first = test_bytes(1000, 1);
        auto const second = test_bytes(2000, 2);
        store.insert(7, make_host_buffer(resource, first));
        store.insert(3, make_host_buffer(resource, second));
        EXPECT_EQ(store.size(), 2U);
        EXPECT_EQ(store.keys(), (std::vector<SpillableStore::Key>{3, 7}));
        EXPECT_EQ(store.bytes(MemoryType::HOST), 3000U);
        EXPECT_TRUE(store.contains(7));
        EXPECT_EQ(contents(*store.extract(7)), first);
        EXPECT_FALSE(store.contains(7));
        EXPECT_FALSE(store.extract(7).has_value());
        EXPECT_EQ(contents(*store.extract(3)), second);
        EXPECT_TRUE(store.empty());
    }
    expect_all_tiers_at_zero(resource);
}

TEST(SpillableStore, SpilledBuffersComeBackInHostWithTheirBytes) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    SpillableStore store(resource, "test");
    std::map<SpillableStore::Key, std::vector<std::byte>> expected;
    for (SpillableStore::Key key = 0; key < 4; ++key) {
        expected[key] = test_bytes(100 * kibibyte + key, key);
        store.insert(key, make_host_buffer(resource, expected[key]));
    }
    auto const total = store.bytes(MemoryType::HOST);
    EXPECT_EQ(store.spill(total), total);
    EXPECT_EQ(store.bytes(MemoryType::HOST), 0U);
    EXPECT_EQ(store.bytes(MemoryType::DISK), total);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
    EXPECT_EQ(spill_files(resource).size(), 4U);
    for (auto const& [key, bytes] : expected) {
        auto buffer = store.extract(key);
        ASSERT_TRUE(buffer.has_value());
        EXPECT_EQ(buffer->mem_type(), MemoryType::HOST);
        EXPECT_EQ(contents(*buffer), bytes);
    }
    EXPECT_EQ(spill_files(resource).size(), 4U);  // kept for the next spills
    EXPECT_EQ(resource.statistics().get("test.spill.bytes")->total, static_cast<double>(total));
    EXPECT_EQ(resource.statistics().get("test.unspill.bytes")->total, static_cast<double>(total));
}

TEST(SpillableStore, SpillsTheSmallestBufferThatCoversTheAmountElseTheLargest) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    SpillableStore store(resource, "test");
    for (std::uint64_t const size : {1, 2, 3, 5, 8}) {
        store.insert(size, make_host_buffer(resource, test_bytes(size * kibibyte, size)));
    }
    EXPECT_EQ(store.spill(4 * kibibyte), 5 * kibibyte);
    // Nothing left covers 9 KiB: the largest (8) goes, then the 1 KiB covers the rest.
    EXPECT_EQ(store.spill(9 * kibibyte), 9 * kibibyte);
    EXPECT_EQ(store.bytes(MemoryType::DISK), 14 * kibibyte);
    EXPECT_EQ(store.bytes(MemoryType::HOST), 5 * kibibyte);
    EXPECT_EQ(store.spill(100 * kibibyte), 5 * kibibyte);
    EXPECT_EQ(store.spill(1), 0U);
}

TEST(SpillableStore, OfEqualSizesSpillsTheLargestKeyFirst) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    SpillableStore store(resource, "test");
    for (SpillableStore::Key key = 0; key < 4; ++key) {
        store.insert(key, make_host_buffer(resource, test_bytes(kibibyte, key)));
    }
    EXPECT_EQ(store.spill(2 * kibibyte), 2 * kibibyte);
    EXPECT_EQ(contents(*store.extract(0)), test_bytes(kibibyte, 0));
    EXPECT_EQ(contents(*store.extract(1)), test_bytes(kibibyte, 1));
    EXPECT_FALSE(resource.statistics().get("test.unspill.bytes").has_value()) << "keys 0 and 1 were spilled";
    EXPECT_EQ(store.bytes(MemoryType::DISK), 2 * kibibyte);
}

TEST(SpillableStore, WithABatchSizeSmallBuffersSpillAFileFullAtATime) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    SpillableStore store(resource, "test", 0, 64 * kibibyte);
    for (SpillableStore::Key key = 0; key < 40; ++key) {
        store.insert(key, make_host_buffer(resource, test_bytes(4 * kibibyte, key)));
    }
    store.insert(40, make_host_buffer(resource, test_bytes(256 * kibibyte, 40)));
    // Asked for one byte, it frees a batch: the 256 KiB buffer covers it alone.
    EXPECT_EQ(store.spill(1), 256 * kibibyte);
    EXPECT_EQ(statistic(resource, "memory.disk.files_created"), 1.0);
    // Then sixteen 4 KiB buffers, written together into one more file.
    EXPECT_EQ(store.spill(1), 64 * kibibyte);
    EXPECT_EQ(statistic(resource, "memory.disk.files_created"), 2.0);
    EXPECT_EQ(spill_files(resource).size(), 2U);
    EXPECT_EQ(store.spill(0), 0U);
    EXPECT_EQ(store.bytes(MemoryType::DISK), 320 * kibibyte);
    for (SpillableStore::Key key = 0; key < 40; ++key) {
        EXPECT_EQ(contents(*store.extract(key)), test_bytes(4 * kibibyte, key)) << "key " << key;
    }
    EXPECT_EQ(contents(*store.extract(40)), test_bytes(256 * kibibyte, 40));
    EXPECT_EQ(resource.statistics().get("test.unspill.bytes")->total, static_cast<double>(320 * kibibyte));
}

TEST(SpillableStore, WithABatchSizeSmallBuffersSpillLargestKeyFirstWhateverTheirSize) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    SpillableStore store(resource, "test", 0, 16 * kibibyte);
    // Key k holds 8 - k KiB: by size alone, keys 0 and 1 would go first.
    for (SpillableStore::Key key = 0; key < 8; ++key) {
        store.insert(key, make_host_buffer(resource, test_bytes((8 - key) * kibibyte, key)));
    }
    store.insert(8, make_host_buffer(resource, test_bytes(32 * kibibyte, 8)));
    // A batch's worth is missing: the 32 KiB buffer covers it alone.
    EXPECT_EQ(store.spill(1), 32 * kibibyte);
    // Keys 7 down to 2 hold 1 + 2 + ... + 6 = 21 KiB, the first to reach 16.
    EXPECT_EQ(store.spill(1), 21 * kibibyte);
    EXPECT_EQ(statistic(resource, "memory.disk.files_created"), 2.0);
    for (SpillableStore::Key key = 0; key < 2; ++key) {
        EXPECT_TRUE(store.extract_if_in_host(key).has_value()) << "key " << key << " was spilled";
    }
    for (SpillableStore::Key key = 2; key < 9; ++key) {
        EXPECT_FALSE(store.extract_if_in_host(key).has_value()) << "key " << key << " is in HOST";
    }
}

TEST(SpillableStore, AFailedBatchSpillLeavesEveryVictimInHost) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    BufferResource resource(faulty_config(root, operations));
    SpillableStore store(resource, "test", 0, mebibyte);
    for (SpillableStore::Key key = 0; key < 8; ++key) {
        store.insert(key, make_host_buffer(resource, test_bytes(10 * kibibyte, key)));
    }
    operations->fail_writes(ENOSPC);
    EXPECT_THROW_WITH(store.spill(1), IoError, "No space left on device");
    EXPECT_EQ(store.bytes(MemoryType::HOST), 80 * kibibyte);
    EXPECT_EQ(resource.memory_used(MemoryType::DISK), 0U);
    EXPECT_TRUE(spill_files(resource).empty());
    EXPECT_EQ(store.spill(1), 80 * kibibyte) << "the buffers can be spilled again";
    for (SpillableStore::Key key = 0; key < 8; ++key) {
        EXPECT_EQ(contents(*store.extract(key)), test_bytes(10 * kibibyte, key));
    }
}

TEST(SpillableStore, TheSpillManagerSpillsItWhenHostRunsShort) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 4 * mebibyte));
    SpillableStore store(resource, "test");
    for (SpillableStore::Key key = 0; key < 4; ++key) {
        store.insert(key, make_host_buffer(resource, test_bytes(mebibyte, key)));
    }
    auto reservation = resource.reserve_and_spill(MemoryType::HOST, 2 * mebibyte, AllowOverbooking::no);
    EXPECT_EQ(store.bytes(MemoryType::DISK), 2 * mebibyte);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), 0);
}

TEST(SpillableStore, ExtractingASpilledBufferSpillsOthersToMakeRoom) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 2 * mebibyte));
    SpillableStore store(resource, "test");
    auto const first = test_bytes(mebibyte, 1);
    store.insert(1, make_host_buffer(resource, first));
    store.spill(mebibyte);
    store.insert(2, make_host_buffer(resource, test_bytes(mebibyte, 2)));
    store.insert(3, make_host_buffer(resource, test_bytes(mebibyte, 3)));
    EXPECT_EQ(contents(*store.extract(1)), first);
    EXPECT_EQ(store.bytes(MemoryType::DISK), mebibyte);
}

TEST(SpillableStore, ExtractFirstTakesBuffersInKeyOrder) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    SpillableStore store(resource, "test");
    for (SpillableStore::Key const key : {5, 1, 9}) {
        store.insert(key, make_host_buffer(resource, test_bytes(10, key)));
    }
    store.spill(1);
    std::vector<SpillableStore::Key> order;
    while (auto item = store.extract_first()) {
        EXPECT_EQ(contents(item->second), test_bytes(10, item->first));
        order.push_back(item->first);
    }
    EXPECT_EQ(order, (std::vector<SpillableStore::Key>{1, 5, 9}));
}

TEST(SpillableStore, PrefetchReadsSpilledBuffersBackWhileHostHasRoomWithoutSpilling) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 3 * mebibyte));
    SpillableStore store(resource, "test");
    for (SpillableStore::Key key = 0; key < 4; ++key) {
        store.insert(key, make_host_buffer(resource, test_bytes(mebibyte, key)));
        store.spill(mebibyte);
    }
    auto held = resource.reserve(MemoryType::HOST, mebibyte, AllowOverbooking::no);
    std::vector<SpillableStore::Key> const order{3, 42, 1, 0, 2};
    EXPECT_EQ(store.prefetch(order), 2 * mebibyte);  // 3 and 1; then HOST is full
    EXPECT_EQ(store.bytes(MemoryType::HOST), 2 * mebibyte);
    EXPECT_EQ(store.bytes(MemoryType::DISK), 2 * mebibyte);
    EXPECT_EQ(resource.statistics().get("test.prefetch.bytes")->total, 2.0 * mebibyte);
    held = MemoryReservation();
    EXPECT_EQ(contents(*store.extract(1)), test_bytes(mebibyte, 1));
    EXPECT_EQ(store.prefetch(order), 2 * mebibyte);
}

TEST(SpillableStore, APrefetchReadsAKeyListedTwiceOnce) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    SpillableStore store(resource, "test");
    for (SpillableStore::Key const key : {1, 2}) {
        store.insert(key, make_host_buffer(resource, test_bytes(1000, key)));
    }
    store.spill(2000);
    std::vector<SpillableStore::Key> const repeated{1, 2, 1, 1};
    EXPECT_EQ(store.prefetch(repeated), 2000U);
    for (SpillableStore::Key const key : {1, 2}) {
        EXPECT_EQ(contents(*store.extract(key)), test_bytes(1000, key));
    }
}

TEST(SpillableStore, APrefetchReadsBuffersSpilledTogetherBackWithARequestPerRunOfNearNeighbours) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    SpillableStore store(resource, "test", 0, mebibyte);
    for (SpillableStore::Key key = 0; key < 30; ++key) {
        store.insert(key, make_host_buffer(resource, test_bytes(5000, key)));
    }
    EXPECT_EQ(store.spill(1), 150'000U);  // a batch: everything, into one file, largest key first
    ASSERT_EQ(spill_files(resource).size(), 1U);
    auto const requests_for = [&](std::vector<SpillableStore::Key> const& keys) {
        auto const before = statistic(resource, "memory.disk.read.requests");
        EXPECT_EQ(store.prefetch(keys), keys.size() * 5000);
        for (auto const key : keys) {
            auto buffer = store.extract_if_in_host(key);
            EXPECT_TRUE(buffer.has_value()) << "key " << key;
            EXPECT_EQ(buffer ? contents(*buffer) : std::vector<std::byte>{}, test_bytes(5000, key)) << "key " << key;
        }
        return statistic(resource, "memory.disk.read.requests") - before;
    };
    EXPECT_EQ(requests_for({12, 10, 14, 11, 13}), 1.0);  // neighbours in the file, asked for in any order
    EXPECT_EQ(requests_for({20, 22}), 1.0);              // a buffer apart: read through
    EXPECT_EQ(requests_for({2, 18, 26}), 3.0);           // far apart in the file
    EXPECT_EQ(store.bytes(MemoryType::DISK), 20 * 5000U);
}

TEST(SpillableStore, AFailedPrefetchLeavesEveryBufferItTookOnDisk) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    BufferResource resource(faulty_config(root, operations));
    SpillableStore store(resource, "test", 0, mebibyte);
    std::vector<SpillableStore::Key> keys;
    for (SpillableStore::Key key = 0; key < 4; ++key) {
        store.insert(key, make_host_buffer(resource, test_bytes(5000, key)));
        keys.push_back(key);
    }
    store.spill(1);
    operations->fail_reads(EIO);
    EXPECT_THROW_WITH(store.prefetch(keys), IoError, "Input/output error");
    EXPECT_EQ(store.bytes(MemoryType::DISK), 20'000U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
    EXPECT_EQ(store.prefetch(keys), 20'000U);
    for (auto const key : keys) {
        auto buffer = store.extract_if_in_host(key);
        ASSERT_TRUE(buffer.has_value()) << "key " << key;
        EXPECT_EQ(contents(*buffer), test_bytes(5000, key));
    }
}

TEST(SpillableStore, ExtractWithOverbookingReadsBackPastTheHostLimit) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, mebibyte));
    SpillableStore store(resource, "test");
    auto const bytes = test_bytes(mebibyte, 1);
    store.insert(1, make_host_buffer(resource, bytes));
    store.spill(mebibyte);
    auto const held = resource.reserve(MemoryType::HOST, mebibyte, AllowOverbooking::no);
    EXPECT_THROW_WITH(store.extract(1), OutOfMemory, "memory_limit_host");
    EXPECT_EQ(store.bytes(MemoryType::DISK), mebibyte);
    auto buffer = store.extract(1, AllowOverbooking::yes);
    ASSERT_TRUE(buffer.has_value());
    EXPECT_EQ(contents(*buffer), bytes);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), mebibyte);
    EXPECT_EQ(resource.memory_available(MemoryType::HOST), -static_cast<std::int64_t>(mebibyte));
}

TEST(SpillableStore, ExtractReadsASpilledBufferBackIntoTheReservationItIsGiven) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 2 * mebibyte));
    SpillableStore store(resource, "test");
    auto const spilled = test_bytes(mebibyte, 1);
    store.insert(1, make_host_buffer(resource, spilled));
    store.spill(mebibyte);
    auto const host = test_bytes(mebibyte - 64 * kibibyte, 2);
    store.insert(2, make_host_buffer(resource, host));

    auto reservation = resource.reserve(MemoryType::HOST, mebibyte + 10, AllowOverbooking::no);
    // The reservation and buffer 2 fill HOST but for 64 KiB: reading buffer
    // 1 back without the reservation would spill buffer 2.
    EXPECT_EQ(contents(*store.extract(1, reservation)), spilled);
    EXPECT_EQ(reservation.size(), 10U);
    EXPECT_EQ(store.bytes(MemoryType::HOST), host.size());
    EXPECT_EQ(contents(*store.extract(2, reservation)), host);
    EXPECT_EQ(reservation.size(), 10U);  // a HOST buffer leaves it alone
    EXPECT_FALSE(store.extract(2, reservation).has_value());
}

TEST(SpillableStore, ExtractWithTooSmallAReservationFailsAndKeepsTheBuffer) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root, 2 * mebibyte));
    SpillableStore store(resource, "test");
    auto const bytes = test_bytes(mebibyte, 1);
    store.insert(1, make_host_buffer(resource, bytes));
    store.spill(mebibyte);
    auto small = resource.reserve(MemoryType::HOST, 10, AllowOverbooking::no);
    EXPECT_THROW_WITH(store.extract(1, small), ReservationError, "the reservation holds 10 B");
    MemoryReservation none;
    EXPECT_THROW_WITH(store.extract(1, none), ReservationError, "reservation of this BufferResource");
    auto disk = resource.reserve(MemoryType::DISK, mebibyte, AllowOverbooking::no);
    EXPECT_THROW_WITH(store.extract(1, disk), ReservationError, "needs a HOST reservation");
    EXPECT_EQ(store.bytes(MemoryType::DISK), mebibyte);
    EXPECT_EQ(contents(*store.extract(1)), bytes);
}

TEST(SpillableStore, ExtractIfInHostLeavesASpilledBufferWhereItIs) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    SpillableStore store(resource, "test");
    store.insert(1, make_host_buffer(resource, test_bytes(100, 1)));
    store.spill(100);
    store.insert(2, make_host_buffer(resource, test_bytes(100, 2)));
    EXPECT_FALSE(store.extract_if_in_host(1).has_value());
    EXPECT_TRUE(store.contains(1));
    EXPECT_EQ(contents(*store.extract_if_in_host(2)), test_bytes(100, 2));
    EXPECT_FALSE(store.contains(2));
    EXPECT_FALSE(store.extract_if_in_host(3).has_value());
    EXPECT_EQ(store.bytes(MemoryType::DISK), 100U);
}

TEST(SpillableStore, EraseFreesABufferWhereItIsWithoutReadingItBack) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    SpillableStore store(resource, "test");
    store.insert(1, make_host_buffer(resource, test_bytes(mebibyte, 1)));
    store.spill(mebibyte);
    store.insert(2, make_host_buffer(resource, test_bytes(100, 2)));
    EXPECT_TRUE(store.erase(1));
    EXPECT_TRUE(store.erase(2));
    EXPECT_FALSE(store.erase(2));
    EXPECT_TRUE(store.empty());
    EXPECT_EQ(store.bytes(MemoryType::DISK), 0U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
    EXPECT_EQ(resource.memory_used(MemoryType::DISK), 0U);
    EXPECT_FALSE(resource.statistics().get("test.unspill.bytes").has_value());
}

TEST(SpillableStore, SpillsAndReadBacksAreTraceSpans) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    SpillableStore store(resource, "test");
    for (SpillableStore::Key key = 0; key < 2; ++key) {
        store.insert(key, make_host_buffer(resource, test_bytes(1000, key)));
    }
    trace::start();
    store.spill(2000);
    std::vector<SpillableStore::Key> const first{0};
    store.prefetch(first);
    store.extract(1);
    trace::stop();
    auto const path = root.path() / "trace.json";
    trace::write(path);
    std::ifstream file(path);
    std::string const json((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    for (auto const* name : {R"("name":"spill")", R"("name":"prefetch")", R"("name":"unspill")"}) {
        EXPECT_NE(json.find(name), std::string::npos) << name << " in " << json;
    }
}

TEST(SpillableStore, RejectsDuplicateKeysForeignBuffersAndAnEmptyName) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    BufferResource other(test_config(root));
    SpillableStore store(resource, "test");
    store.insert(1, make_host_buffer(resource, test_bytes(10, 1)));
    EXPECT_THROW_WITH(store.insert(1, make_host_buffer(resource, test_bytes(10, 2))), InvalidArgument,
                      "already holds key 1");
    EXPECT_THROW_WITH(store.insert(2, make_host_buffer(other, test_bytes(10, 2))), InvalidArgument,
                      "of the store's resource");
    EXPECT_THROW_WITH(SpillableStore(resource, ""), InvalidArgument, "needs a name");
    EXPECT_EQ(contents(*store.extract(1)), test_bytes(10, 1));
}

TEST(SpillableStore, InsertsAndExtractsGoOnWhileASpillWritesOutsideTheLock) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    BufferResource resource(faulty_config(root, operations));
    SpillableStore store(resource, "test");
    store.insert(1, make_host_buffer(resource, test_bytes(64 * kibibyte, 1)));  // the victim
    store.insert(2, make_host_buffer(resource, test_bytes(kibibyte, 2)));
    Event writing;
    Event others_done;
    operations->before_write([&] {
        writing.set();
        EXPECT_TRUE(others_done.wait()) << "insert or extract waited for the spill's I/O";
    });
    Watchdog watchdog("a spill writing while the store is used");
    std::thread spiller([&] { EXPECT_EQ(store.spill(64 * kibibyte), 64 * kibibyte); });
    ASSERT_TRUE(writing.wait());
    store.insert(3, make_host_buffer(resource, test_bytes(kibibyte, 3)));
    EXPECT_EQ(contents(*store.extract(2)), test_bytes(kibibyte, 2));
    EXPECT_TRUE(store.contains(1)) << "a buffer being spilled is still in the store";
    others_done.set();
    spiller.join();
    operations->before_write({});
    EXPECT_EQ(contents(*store.extract(1)), test_bytes(64 * kibibyte, 1));
}

TEST(SpillableStore, TwoThreadsShortOfMemorySpillOneStoreAtTheSameTime) {
    // Its spill function is registered shared: the second caller writes
    // another victim instead of skipping the store or waiting for the first.
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    BufferResource resource(faulty_config(root, operations));
    SpillableStore store(resource, "test");
    store.insert(1, make_host_buffer(resource, test_bytes(64 * kibibyte, 1)));
    store.insert(2, make_host_buffer(resource, test_bytes(64 * kibibyte, 2)));
    Rendezvous writing(2);
    std::atomic<bool> met{true};
    operations->before_write([&] {
        if (!writing.arrive_and_wait()) {
            met = false;
        }
    });
    Watchdog watchdog("two spills of one store");
    auto const spill = [&] { EXPECT_EQ(resource.spill_manager().spill(64 * kibibyte), 64 * kibibyte); };
    std::thread one(spill);
    std::thread two(spill);
    one.join();
    two.join();
    operations->before_write({});
    EXPECT_TRUE(met) << "one spill of the store waited for the other's write: its calls are serialized";
    EXPECT_EQ(store.bytes(MemoryType::DISK), 128 * kibibyte);
    EXPECT_EQ(contents(*store.extract(1)), test_bytes(64 * kibibyte, 1));
    EXPECT_EQ(contents(*store.extract(2)), test_bytes(64 * kibibyte, 2));
}

TEST(SpillableStore, RequestsAtOnceSmallerThanItsBuffersSpillAboutTheFewestBuffersTheyNeed) {
    // Each caller claimed at most its request, all claimed at once, and each
    // wrote a whole buffer: 8 requests of 1 MiB spilled all eight 4 MiB
    // buffers instead of two, 8 of 256 KiB seven or eight 1 MiB ones.
    Watchdog watchdog("concurrent requests smaller than the store's buffers");
    auto const few_large = spilled_by_requests_at_once(8, mebibyte, 4 * mebibyte, 8);
    EXPECT_GE(few_large, 8 * mebibyte);
    EXPECT_LE(static_cast<double>(few_large), 1.10 * 8 * mebibyte) << "spilled " << few_large / mebibyte << " MiB";
    auto const many_small = spilled_by_requests_at_once(8, 256 * kibibyte, mebibyte, 16);
    EXPECT_GE(many_small, 2 * mebibyte);
    EXPECT_LE(static_cast<double>(many_small), 1.10 * 2 * mebibyte) << "spilled " << many_small / mebibyte << " MiB";
}

TEST(SpillableStore, RequestsAtOnceForMoreThanABufferWriteTheirVictimsAtTheSameTime) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    auto config = faulty_config(root, operations);
    config.host_limit = SizeSpec::bytes(2 * mebibyte);
    BufferResource resource(config);
    SpillableStore store(resource, "test");
    store.insert(1, host_buffer(resource, mebibyte));
    store.insert(2, host_buffer(resource, mebibyte));
    Rendezvous writing(2);
    std::atomic<bool> met{true};
    operations->before_write([&] {
        if (!writing.arrive_and_wait()) {
            met = false;
        }
    });
    Watchdog watchdog("two requests spilling one store");
    auto const request = [&] {
        auto const reservation = resource.reserve_and_spill(MemoryType::HOST, mebibyte, AllowOverbooking::no);
        EXPECT_EQ(reservation.size(), mebibyte);
    };
    std::thread one(request);
    std::thread two(request);
    one.join();
    two.join();
    operations->before_write({});
    EXPECT_TRUE(met) << "one request waited for the other's write before it chose its own victim";
    EXPECT_EQ(store.bytes(MemoryType::DISK), 2 * mebibyte);
}

TEST(SpillableStore, ExtractWaitsForASpillOfThatBufferToFinish) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    BufferResource resource(faulty_config(root, operations));
    SpillableStore store(resource, "test");
    auto const bytes = test_bytes(64 * kibibyte, 1);
    store.insert(1, make_host_buffer(resource, bytes));
    Event writing;
    Event release;
    operations->before_write([&] {
        writing.set();
        EXPECT_TRUE(release.wait());
    });
    Watchdog watchdog("extract during a spill");
    std::thread spiller([&] { store.spill(1); });
    ASSERT_TRUE(writing.wait());
    operations->before_write({});
    Event extracted;
    std::atomic<pid_t> extracting_tid{0};
    auto extracting = std::async(std::launch::async, [&] {
        extracting_tid = static_cast<pid_t>(::gettid());
        auto buffer = store.extract(1);
        extracted.set();
        return buffer;
    });
    // The extract either returns (wrong) or blocks, waiting for the spill.
    while (!extracted.wait(0ms) && !(extracting_tid != 0 && thread_blocked(extracting_tid))) {
        std::this_thread::yield();
    }
    EXPECT_FALSE(extracted.wait(0ms)) << "extract returned while its buffer was being spilled";
    release.set();
    auto buffer = extracting.get();
    spiller.join();
    ASSERT_TRUE(buffer.has_value());
    EXPECT_EQ(contents(*buffer), bytes);
}

TEST(SpillableStore, AFailedSpillLeavesTheBuffersInHost) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    BufferResource resource(faulty_config(root, operations));
    SpillableStore store(resource, "test");
    for (SpillableStore::Key key = 0; key < 3; ++key) {
        store.insert(key, make_host_buffer(resource, test_bytes(10 * kibibyte, key)));
    }
    operations->fail_writes(ENOSPC);
    EXPECT_THROW_WITH(store.spill(30 * kibibyte), IoError, "No space left on device");
    EXPECT_EQ(store.bytes(MemoryType::HOST), 30 * kibibyte);
    EXPECT_EQ(resource.memory_used(MemoryType::DISK), 0U);
    EXPECT_EQ(store.spill(30 * kibibyte), 30 * kibibyte) << "the buffers can be spilled again";
    for (SpillableStore::Key key = 0; key < 3; ++key) {
        EXPECT_EQ(contents(*store.extract(key)), test_bytes(10 * kibibyte, key));
    }
}

TEST(SpillableStore, AFailedUnspillLeavesTheBufferInTheStore) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    BufferResource resource(faulty_config(root, operations));
    SpillableStore store(resource, "test");
    store.insert(1, make_host_buffer(resource, test_bytes(10 * kibibyte, 1)));
    store.spill(1);
    operations->fail_reads(EIO);
    EXPECT_THROW_WITH(store.extract(1), IoError, "Input/output error");
    EXPECT_TRUE(store.contains(1));
    EXPECT_EQ(store.bytes(MemoryType::DISK), 10 * kibibyte);
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
    EXPECT_EQ(contents(*store.extract(1)), test_bytes(10 * kibibyte, 1));
}

TEST(SpillableStore, TheSpillQuotaStopsSpillingWithAClearError) {
    TemporaryDirectory root;
    auto config = test_config(root, 3 * mebibyte);
    config.disk_limit = SizeSpec::bytes(mebibyte);
    BufferResource resource(config);
    SpillableStore store(resource, "test");
    for (SpillableStore::Key key = 0; key < 3; ++key) {
        store.insert(key, make_host_buffer(resource, test_bytes(mebibyte, key)));
    }
    EXPECT_THROW_WITH(store.spill(3 * mebibyte), OutOfMemory, "max_spill_bytes");
    EXPECT_EQ(store.bytes(MemoryType::DISK), mebibyte);
    EXPECT_EQ(store.bytes(MemoryType::HOST), 2 * mebibyte);
    EXPECT_THROW_WITH(
        resource.reserve_and_spill(MemoryType::HOST, 2 * mebibyte, AllowOverbooking::no), OutOfMemory,
        "max_spill_bytes"
    );
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
}

TEST(SpillableStore, ForceDiskSendsEveryInsertedBufferThroughTheDisk) {
    TemporaryDirectory root;
    auto config = test_config(root);
    config.force_disk = true;
    BufferResource resource(config);
    SpillableStore store(resource, "test");
    auto const bytes = test_bytes(5000, 1);
    store.insert(1, make_host_buffer(resource, bytes));
    EXPECT_EQ(store.bytes(MemoryType::DISK), 5000U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
    EXPECT_EQ(contents(*store.extract(1)), bytes);
    EXPECT_EQ(resource.statistics().get("test.unspill.bytes")->total, 5000.0);
}

TEST(SpillableStore, RestorePutsAnExtractedBufferBackAsItIsEvenUnderForceDisk) {
    TemporaryDirectory root;
    auto config = test_config(root);
    config.force_disk = true;
    BufferResource resource(config);
    SpillableStore store(resource, "test");
    auto const bytes = test_bytes(5000, 1);
    store.insert(1, make_host_buffer(resource, bytes));
    auto extracted = store.extract(1);
    ASSERT_TRUE(extracted.has_value());
    store.restore(1, std::move(*extracted));
    EXPECT_EQ(store.bytes(MemoryType::HOST), 5000U) << "restore makes no move";
    EXPECT_EQ(store.bytes(MemoryType::DISK), 0U);
    EXPECT_EQ(contents(*store.extract(1)), bytes);
    EXPECT_DEATH(
        {
            store.insert(2, make_host_buffer(resource, bytes));
            store.restore(2, make_host_buffer(resource, bytes));
        },
        "already holds key 2"
    );
}

TEST(SpillableStore, DestroyingTheStoreRemovesItsSpillFunctionAndFreesItsBuffers) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    {
        SpillableStore store(resource, "test");
        store.insert(1, make_host_buffer(resource, test_bytes(5000, 1)));
        store.insert(2, make_host_buffer(resource, test_bytes(5000, 2)));
        store.spill(1);
        EXPECT_EQ(spill_files(resource).size(), 1U);
    }
    EXPECT_EQ(resource.spill_manager().spill(1), 0U);
    EXPECT_EQ(spill_files(resource).size(), 1U);  // kept for the next spill
    expect_all_tiers_at_zero(resource);
}

TEST(SpillableStore, BehavesLikeAMapUnderRandomOperations) {
    // Model-based: the same random operations on the store and on a std::map,
    // with a HOST limit small enough that inserts and extracts spill; stores
    // with a batch size spill many buffers into one file, which prefetches
    // then read back together.
    TemporaryDirectory root;
    std::mt19937_64 random(20240601);
    for (auto const& [codec, batch_bytes] :
         {std::pair{Codec::none, 0UL}, std::pair{Codec::lz4, 0UL}, std::pair{Codec::zstd, 0UL},
          std::pair{Codec::none, 64 * kibibyte}, std::pair{Codec::zstd, 64 * kibibyte}}) {
        auto config = test_config(root, 256 * kibibyte);
        config.spill_codec = codec;
        BufferResource resource(config);
        {
            SpillableStore store(resource, "model", 0, batch_bytes);
            std::map<SpillableStore::Key, std::vector<std::byte>> model;
            for (int step = 0; step < 400; ++step) {
                auto const key = random() % 40;
                switch (random() % 6) {
                case 0:
                case 1: {
                    if (model.contains(key)) {
                        break;
                    }
                    auto bytes = test_bytes(random() % (48 * kibibyte), random(), random() % 2 == 0);
                    auto reservation = resource.reserve_and_spill(MemoryType::HOST, bytes.size(), AllowOverbooking::no);
                    auto buffer = resource.make_buffer(bytes.size(), reservation);
                    std::ranges::copy(bytes, buffer.data().begin());
                    store.insert(key, std::move(buffer));
                    model[key] = std::move(bytes);
                    break;
                }
                case 2: {
                    auto buffer = store.extract(key);
                    auto const expected = model.find(key);
                    ASSERT_EQ(buffer.has_value(), expected != model.end()) << "key " << key;
                    if (buffer) {
                        EXPECT_EQ(contents(*buffer), expected->second) << "key " << key;
                        model.erase(expected);
                    }
                    break;
                }
                case 3:
                    store.spill(random() % (64 * kibibyte));
                    break;
                case 4: {
                    auto const keys = store.keys();
                    store.prefetch(keys);
                    break;
                }
                case 5:
                    if (auto item = store.extract_first()) {
                        ASSERT_EQ(item->first, model.begin()->first);
                        EXPECT_EQ(contents(item->second), model.begin()->second);
                        model.erase(model.begin());
                    }
                    break;
                }
                std::vector<SpillableStore::Key> model_keys;
                std::uint64_t model_bytes = 0;
                for (auto const& [k, bytes] : model) {
                    model_keys.push_back(k);
                    model_bytes += bytes.size();
                }
                ASSERT_EQ(store.keys(), model_keys);
                ASSERT_EQ(store.bytes(MemoryType::HOST) + store.bytes(MemoryType::DISK), model_bytes);
                ASSERT_EQ(resource.memory_used(MemoryType::HOST), store.bytes(MemoryType::HOST));
                ASSERT_EQ(resource.memory_used(MemoryType::DISK), store.bytes(MemoryType::DISK));
                ASSERT_GE(resource.memory_available(MemoryType::HOST), 0);
            }
        }
        expect_all_tiers_at_zero(resource);
    }
}

TEST(SpillableStore, AStoreMadeWithOwnerBytesCountsEachKeysBookkeepingInHostWhereverItsBufferIs) {
    // 300 keys of 100 owner bytes each and the store's own nodes: a few
    // hundred bytes per key, reserved a step of 4 KiB at a time, kept while
    // the buffers are spilled, and returned as the keys go.
    constexpr std::size_t step = 4 * kibibyte;
    constexpr std::size_t keys = 300;
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    SpillableStore store(resource, "test", 0, 0, 100);
    auto const per_key = store.bookkeeping_bytes_per_key();
    EXPECT_GT(per_key, 100U + 2 * 4 * sizeof(void*)) << "two tree nodes beside the owner's bytes";
    auto const counted_for = [&](std::size_t held) { return (held * per_key + step - 1) / step * step; };
    for (std::size_t key = 0; key < keys; ++key) {
        store.insert(key, host_buffer(resource, 16));
        ASSERT_EQ(resource.memory_reserved(MemoryType::HOST), counted_for(key + 1));
    }
    EXPECT_EQ(store.spill(keys * 16), keys * 16);
    EXPECT_EQ(store.bytes(MemoryType::HOST), 0U);
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), counted_for(keys)) << "spilled keys cost as much";
    for (std::size_t key = 0; key < keys; ++key) {
        ASSERT_TRUE(store.erase(key));
        auto const reserved = resource.memory_reserved(MemoryType::HOST);
        EXPECT_GE(reserved, counted_for(keys - key - 1));
        EXPECT_LE(reserved, counted_for(keys - key - 1) + step) << "one step of slack";
    }
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U) << "an empty store reserves nothing";
}

TEST(SpillableStore, AStoreMadeWithoutOwnerBytesCountsNoBookkeeping) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    SpillableStore store(resource, "test");
    EXPECT_EQ(store.bookkeeping_bytes_per_key(), 0U);
    for (std::size_t key = 0; key < 100; ++key) {
        store.insert(key, host_buffer(resource, 16));
    }
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
}

TEST(SpillableStore, CountedBookkeepingMakesOtherRequestsSpillBuffers) {
    // HOST holds 64 KiB. The keys' bookkeeping takes about half of it, so a
    // request for the other half must spill buffers that would fit beside it
    // if the bookkeeping went uncounted.
    constexpr std::size_t limit = 64 * kibibyte;
    TemporaryDirectory root;
    BufferResource resource(test_config(root, limit));
    SpillableStore store(resource, "test", 0, 0, 1000);
    std::size_t keys = 0;
    while ((keys + 1) * store.bookkeeping_bytes_per_key() <= limit / 2) {
        store.insert(keys, host_buffer(resource, 256));
        ++keys;
    }
    auto const buffers = keys * BufferResource::allocated_capacity(256);
    ASSERT_LE(buffers + limit / 2, limit) << "uncounted, the bookkeeping would leave room for the request";
    auto const request = resource.reserve_and_spill(MemoryType::HOST, limit / 2, AllowOverbooking::no);
    EXPECT_EQ(request.size(), limit / 2);
    EXPECT_GT(store.bytes(MemoryType::DISK), 0U);
}
