// The DISK tier, through BufferResource::move: spill files, codecs, checks,
// faults and the spill directory's life cycle.
#include <common/error_matchers.hpp>
#include <common/fault_injecting_file_operations.hpp>
#include <common/scoped_environment.hpp>
#include <common/temporary_directory.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <utility>
#include <vector>

#include <spillway/core/error.hpp>
#include <spillway/memory/buffer_resource.hpp>

#include <gtest/gtest.h>

#include "memory_test_support.hpp"

using namespace spillway;
using namespace spillway::memory;
using namespace spillway::test;

namespace {

/// A pid that no process has: a child that has exited and been reaped.
pid_t dead_pid() {
    pid_t const child = fork();
    if (child == 0) {
        _exit(0);
    }
    waitpid(child, nullptr, 0);
    return child;
}

void make_owned_directory(std::filesystem::path const& path, std::string const& owner) {
    std::filesystem::create_directories(path);
    std::ofstream(path / "owner") << owner << "\n";
    std::ofstream(path / "buffer-0") << "left behind";
}

void flip_byte(std::filesystem::path const& path, std::uint64_t offset) {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(static_cast<std::streamoff>(offset));
    char byte = 0;
    file.get(byte);
    file.seekp(static_cast<std::streamoff>(offset));
    file.put(static_cast<char>(byte ^ 0x5a));
}

/// The bytes of the file at `path`.
std::vector<std::byte> file_contents(std::filesystem::path const& path) {
    std::ifstream file(path, std::ios::binary);
    std::vector<char> const chars{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    std::vector<std::byte> bytes(chars.size());
    std::memcpy(bytes.data(), chars.data(), chars.size());
    return bytes;
}

/// `values` as bytes.
std::vector<std::byte> byte_vector(std::initializer_list<unsigned char> values) {
    std::vector<std::byte> bytes;
    for (auto const value : values) {
        bytes.push_back(std::byte{value});
    }
    return bytes;
}

/// The sum of the sizes of `resource`'s spill files.
std::uint64_t spill_file_bytes(BufferResource const& resource) {
    std::uint64_t total = 0;
    for (auto const& file : spill_files(resource)) {
        total += std::filesystem::file_size(file);
    }
    return total;
}

class DiskTierCodec : public ::testing::TestWithParam<Codec> {
  protected:
    MemoryConfig config() const {
        auto result = test_config(root_);
        result.spill_codec = GetParam();
        return result;
    }
    TemporaryDirectory root_;
};

INSTANTIATE_TEST_SUITE_P(
    EveryCodec, DiskTierCodec, ::testing::Values(Codec::none, Codec::lz4, Codec::zstd),
    [](auto const& test) { return std::string(to_string(test.param)); }
);

}  // namespace

TEST_P(DiskTierCodec, RoundTripsRandomAndCompressibleDataOfEverySize) {
    BufferResource resource(config());
    std::uint64_t seed = 0;
    for (std::size_t size : {0UL, 1UL, 4095UL, 4096UL, 4097UL, 3 * mebibyte + 5, 9 * mebibyte + 123}) {
        for (bool compressible : {false, true}) {
            auto const bytes = test_bytes(size, ++seed, compressible);
            auto disk = move_to(resource, make_host_buffer(resource, bytes), MemoryType::DISK);
            EXPECT_EQ(disk.mem_type(), MemoryType::DISK);
            EXPECT_EQ(disk.size(), size);
            EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
            EXPECT_EQ(resource.memory_used(MemoryType::DISK), size);
            auto host = move_to(resource, std::move(disk), MemoryType::HOST);
            EXPECT_EQ(contents(host), bytes) << "size " << size << ", compressible " << compressible;
            // The freed file is kept for the next spill; a smaller one is removed.
            EXPECT_EQ(spill_files(resource).size(), 1U);
        }
    }
    EXPECT_EQ(resource.memory_used(MemoryType::DISK), 0U);
}

TEST_P(DiskTierCodec, ACorruptedPayloadByteIsCorruptDataNamingTheFile) {
    BufferResource resource(config());
    auto disk = move_to(resource, make_host_buffer(resource, test_bytes(100'000, 1)), MemoryType::DISK);
    auto const file = spill_files(resource).at(0);
    flip_byte(file, 777);
    EXPECT_THROW_WITH(move_to(resource, std::move(disk), MemoryType::HOST), CorruptData, file.string());
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
}

TEST_P(DiskTierCodec, ATruncatedFileIsCorruptDataNamingTheFile) {
    BufferResource resource(config());
    auto disk = move_to(resource, make_host_buffer(resource, test_bytes(100'000, 2)), MemoryType::DISK);
    auto const file = spill_files(resource).at(0);
    std::filesystem::resize_file(file, 1000);
    EXPECT_THROW_WITH(move_to(resource, std::move(disk), MemoryType::HOST), CorruptData, "truncated");
}

TEST_P(DiskTierCodec, AFileHoldingAnotherBuffersBytesIsCorruptData) {
    BufferResource resource(config());
    auto first = move_to(resource, make_host_buffer(resource, test_bytes(100'000, 3)), MemoryType::DISK);
    auto const first_file = spill_files(resource).at(0);
    auto second = move_to(resource, make_host_buffer(resource, test_bytes(100'000, 4)), MemoryType::DISK);
    auto const files = spill_files(resource);
    ASSERT_EQ(files.size(), 2U);
    auto const second_file = files.at(0) == first_file ? files.at(1) : files.at(0);
    std::filesystem::copy_file(second_file, first_file, std::filesystem::copy_options::overwrite_existing);
    EXPECT_THROW_WITH(move_to(resource, std::move(first), MemoryType::HOST), CorruptData, "payload checksum");
    EXPECT_EQ(first.mem_type(), MemoryType::DISK);  // unchanged on failure
}

namespace {

/// HOST buffers of `resource` holding `contents`, each in turn.
std::vector<Buffer> host_buffers(BufferResource& resource, std::vector<std::vector<std::byte>> const& contents) {
    std::vector<Buffer> buffers;
    for (auto const& bytes : contents) {
        buffers.push_back(make_host_buffer(resource, bytes));
    }
    return buffers;
}

/// Moves `buffers` to `tier` together (`move_to_disk` or `move_to_host`),
/// reserving their total there.
void move_together(BufferResource& resource, std::vector<Buffer>& buffers, MemoryType tier = MemoryType::DISK) {
    std::size_t total = 0;
    for (auto const& buffer : buffers) {
        total += buffer.size();
    }
    auto reservation = resource.reserve(tier, total, AllowOverbooking::no);
    if (tier == MemoryType::DISK) {
        resource.move_to_disk(buffers, reservation);
    } else {
        resource.move_to_host(buffers, reservation);
    }
}

/// Random and compressible contents of 8 sizes from empty to past the 4 MiB
/// staging area, seeded from `seed` on.
std::vector<std::vector<std::byte>> varied_contents(std::uint64_t seed) {
    std::vector<std::vector<std::byte>> contents;
    for (std::size_t size : {5000UL, 0UL, 1UL, 4096UL, 3 * mebibyte + 5, 4097UL, 9 * mebibyte + 123, 100UL}) {
        ++seed;
        contents.push_back(test_bytes(size, seed, seed % 2 == 0));
    }
    return contents;
}

}  // namespace

TEST_P(DiskTierCodec, BuffersMovedTogetherShareOneFileAndEachComesBackAsItWas) {
    BufferResource resource(config());
    auto const expected = varied_contents(40);
    auto buffers = host_buffers(resource, expected);
    move_together(resource, buffers);
    EXPECT_EQ(spill_files(resource).size(), 1U);
    EXPECT_EQ(statistic(resource, "memory.disk.files_created"), 1.0);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
    // Read back out of order, each on its own.
    for (std::size_t i : {6UL, 0UL, 7UL, 2UL, 1UL, 4UL, 3UL, 5UL}) {
        EXPECT_EQ(buffers[i].mem_type(), MemoryType::DISK);
        EXPECT_EQ(contents(move_to(resource, std::move(buffers[i]), MemoryType::HOST)), expected[i]) << "buffer " << i;
    }
    EXPECT_EQ(resource.memory_used(MemoryType::DISK), 0U);
}

TEST_P(DiskTierCodec, ACorruptedPayloadInASharedFileFailsOnlyItsBufferAndAMoveBackTogetherOfIt) {
    BufferResource resource(config());
    std::vector<std::vector<std::byte>> const expected{test_bytes(10'000, 50), test_bytes(10'000, 51),
                                                       test_bytes(10'000, 52)};
    auto buffers = host_buffers(resource, expected);
    move_together(resource, buffers);
    auto const file = spill_files(resource).at(0);
    // Each payload begins at a block boundary: the second one after the
    // first's 10,000 random bytes, which no codec shrinks below 8192.
    flip_byte(file, 12'288 + 10);
    // Together, all or nothing: every buffer stays on DISK.
    auto reservation = resource.reserve(MemoryType::HOST, 30'000, AllowOverbooking::no);
    EXPECT_THROW_WITH(resource.move_to_host(buffers, reservation), CorruptData, file.string());
    for (auto const& buffer : buffers) {
        EXPECT_EQ(buffer.mem_type(), MemoryType::DISK);
    }
    EXPECT_EQ(reservation.size(), 30'000U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
    reservation = MemoryReservation();
    EXPECT_THROW_WITH(move_to(resource, std::move(buffers[1]), MemoryType::HOST), CorruptData, file.string());
    EXPECT_EQ(buffers[1].mem_type(), MemoryType::DISK);
    EXPECT_EQ(contents(move_to(resource, std::move(buffers[0]), MemoryType::HOST)), expected[0]);
    EXPECT_EQ(contents(move_to(resource, std::move(buffers[2]), MemoryType::HOST)), expected[2]);
}

TEST(DiskTier, AFileOfBuffersMovedTogetherIsKeptUntilTheLastOfThemIsGoneThenReused) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    std::vector<std::vector<std::byte>> const expected{test_bytes(20'000, 60), test_bytes(20'000, 61),
                                                       test_bytes(20'000, 62)};
    auto buffers = host_buffers(resource, expected);
    move_together(resource, buffers);
    auto const file = spill_files(resource).at(0);
    EXPECT_EQ(contents(move_to(resource, std::move(buffers[0]), MemoryType::HOST)), expected[0]);
    static_cast<void>(Buffer(std::move(buffers[2])));  // freed on DISK
    // One buffer still lives in the file: the next spill may not write over it.
    auto other = move_to(resource, make_host_buffer(resource, test_bytes(4000, 63)), MemoryType::DISK);
    EXPECT_EQ(statistic(resource, "memory.disk.files_reused"), 0.0);
    EXPECT_EQ(contents(move_to(resource, std::move(buffers[1]), MemoryType::HOST)), expected[1]);
    auto const bytes = test_bytes(50'000, 64);
    auto reused = move_to(resource, make_host_buffer(resource, bytes), MemoryType::DISK);
    EXPECT_EQ(statistic(resource, "memory.disk.files_reused"), 1.0);
    EXPECT_TRUE(std::filesystem::exists(file));
    EXPECT_EQ(contents(move_to(resource, std::move(reused), MemoryType::HOST)), bytes);
}

TEST(DiskTier, AFailedMoveTogetherLeavesEveryBufferInHostAndNoFile) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    BufferResource resource(faulty_config(root, operations));
    std::vector<std::vector<std::byte>> const expected{test_bytes(3000, 70), test_bytes(3000, 71)};
    auto buffers = host_buffers(resource, expected);
    auto const host_used = resource.memory_used(MemoryType::HOST);
    operations->fail_writes(ENOSPC);
    EXPECT_THROW_WITH(move_together(resource, buffers), IoError, "No space left on device");
    for (std::size_t i = 0; i < buffers.size(); ++i) {
        EXPECT_EQ(buffers[i].mem_type(), MemoryType::HOST);
        EXPECT_EQ(contents(buffers[i]), expected[i]);
    }
    EXPECT_TRUE(spill_files(resource).empty());
    EXPECT_EQ(resource.memory_used(MemoryType::DISK), 0U);
    EXPECT_EQ(resource.memory_reserved(MemoryType::DISK), 0U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), host_used);
}

TEST(DiskTier, MovingTogetherRejectsBuffersNotInHostAndReservationsTooSmall) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    std::vector<Buffer> buffers;
    buffers.push_back(make_host_buffer(resource, test_bytes(1000, 80)));
    buffers.push_back(move_to(resource, make_host_buffer(resource, test_bytes(1000, 81)), MemoryType::DISK));
    auto reservation = resource.reserve(MemoryType::DISK, 2000, AllowOverbooking::no);
    EXPECT_THROW_WITH(resource.move_to_disk(buffers, reservation), InvalidArgument, "HOST buffers");
    buffers.pop_back();
    buffers.push_back(make_host_buffer(resource, test_bytes(1500, 82)));
    auto small = resource.reserve(MemoryType::DISK, 2000, AllowOverbooking::no);
    EXPECT_THROW(resource.move_to_disk(buffers, small), ReservationError);
    EXPECT_EQ(buffers[0].mem_type(), MemoryType::HOST);
    EXPECT_EQ(buffers[1].mem_type(), MemoryType::HOST);
}

TEST_P(DiskTierCodec, BuffersMovedBackTogetherComeBackAsTheyWereWithAReadPerRunOfNeighbours) {
    BufferResource resource(config());
    auto expected = varied_contents(90);
    auto first_file = host_buffers(resource, expected);
    move_together(resource, first_file);
    std::vector<std::vector<std::byte>> const more{test_bytes(3000, 98), test_bytes(7000, 99), test_bytes(10, 100)};
    auto second_file = host_buffers(resource, more);
    move_together(resource, second_file);
    ASSERT_EQ(spill_files(resource).size(), 2U);
    expected.insert(expected.end(), more.begin(), more.end());
    // Asked for in an order of neither file, the second file's buffers first.
    std::vector<std::size_t> const order{9, 6, 0, 10, 7, 2, 1, 8, 4, 3, 5};
    std::vector<Buffer> buffers;
    for (auto const i : order) {
        auto& source = i < first_file.size() ? first_file[i] : second_file[i - first_file.size()];
        buffers.push_back(std::move(source));
    }
    auto const requests = statistic(resource, "memory.disk.read.requests");
    move_together(resource, buffers, MemoryType::HOST);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
        ASSERT_EQ(buffers[i].mem_type(), MemoryType::HOST);
        EXPECT_EQ(contents(buffers[i]), expected[order[i]]) << "buffer " << order[i];
        total += expected[order[i]].size();
    }
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), total);
    EXPECT_EQ(resource.memory_used(MemoryType::DISK), 0U);
    if (GetParam() == Codec::none) {
        // The first file's 12.6 MiB of neighbours through the 4 MiB staging
        // area in 4 reads, the second file's in 1: 5 where one each made 11.
        EXPECT_EQ(statistic(resource, "memory.disk.read.requests") - requests, 5.0);
    }
}

TEST_P(DiskTierCodec, ATruncatedFileFailsAMoveBackTogetherAsCorruptData) {
    BufferResource resource(config());
    auto buffers = host_buffers(resource, {test_bytes(100'000, 104), test_bytes(100'000, 105)});
    move_together(resource, buffers);
    std::filesystem::resize_file(spill_files(resource).at(0), 110'000);
    EXPECT_THROW_WITH(move_together(resource, buffers, MemoryType::HOST), CorruptData, "truncated");
    EXPECT_EQ(buffers[0].mem_type(), MemoryType::DISK);
    EXPECT_EQ(buffers[1].mem_type(), MemoryType::DISK);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
}

TEST(DiskTier, AReadErrorFailsAMoveBackTogetherAsAnIoErrorAndLeavesEveryBufferOnDisk) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    BufferResource resource(faulty_config(root, operations));
    std::vector<std::vector<std::byte>> const expected{test_bytes(3000, 106), test_bytes(3000, 107)};
    auto buffers = host_buffers(resource, expected);
    move_together(resource, buffers);
    operations->fail_reads(EIO);
    EXPECT_THROW_WITH(move_together(resource, buffers, MemoryType::HOST), IoError, "Input/output error");
    EXPECT_EQ(buffers[0].mem_type(), MemoryType::DISK);
    EXPECT_EQ(buffers[1].mem_type(), MemoryType::DISK);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 0U);
    EXPECT_EQ(resource.memory_reserved(MemoryType::HOST), 0U);
    move_together(resource, buffers, MemoryType::HOST);
    EXPECT_EQ(contents(buffers[0]), expected[0]);
    EXPECT_EQ(contents(buffers[1]), expected[1]);
}

TEST(DiskTier, MovingBackTogetherRejectsBuffersNotOnDiskAndReservationsTooSmall) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    std::vector<Buffer> buffers;
    buffers.push_back(move_to(resource, make_host_buffer(resource, test_bytes(1000, 108)), MemoryType::DISK));
    buffers.push_back(make_host_buffer(resource, test_bytes(1000, 109)));
    auto reservation = resource.reserve(MemoryType::HOST, 2000, AllowOverbooking::no);
    EXPECT_THROW_WITH(resource.move_to_host(buffers, reservation), InvalidArgument, "DISK buffers");
    buffers.back() = move_to(resource, std::move(buffers.back()), MemoryType::DISK);
    auto small = resource.reserve(MemoryType::HOST, 1999, AllowOverbooking::no);
    EXPECT_THROW(resource.move_to_host(buffers, small), ReservationError);
    EXPECT_EQ(buffers[0].mem_type(), MemoryType::DISK);
    EXPECT_EQ(buffers[1].mem_type(), MemoryType::DISK);
}

TEST(DiskTier, ADeletedFileIsAnIoErrorNamingTheFile) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    auto disk = move_to(resource, make_host_buffer(resource, test_bytes(5000, 4)), MemoryType::DISK);
    auto const file = spill_files(resource).at(0);
    std::filesystem::remove(file);
    EXPECT_THROW_WITH(move_to(resource, std::move(disk), MemoryType::HOST), IoError, file.string() + "' is missing");
    EXPECT_EQ(disk.mem_type(), MemoryType::DISK);  // unchanged on failure
}

TEST(DiskTier, AFreedFileIsWrittenOverByTheNextBufferThatFitsIt) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    auto const large = test_bytes(100'000, 30);
    EXPECT_EQ(contents(move_to(resource, move_to(resource, make_host_buffer(resource, large), MemoryType::DISK),
                               MemoryType::HOST)),
              large);
    auto const file = spill_files(resource).at(0);
    auto const file_size = std::filesystem::file_size(file);

    auto const small = test_bytes(5000, 31);
    auto disk = move_to(resource, make_host_buffer(resource, small), MemoryType::DISK);
    EXPECT_EQ(spill_files(resource), std::vector{file});
    EXPECT_EQ(std::filesystem::file_size(file), file_size);  // its blocks are kept, not cut off
    EXPECT_EQ(statistic(resource, "memory.disk.files_created"), 1.0);
    EXPECT_EQ(statistic(resource, "memory.disk.files_reused"), 1.0);
    EXPECT_EQ(contents(move_to(resource, std::move(disk), MemoryType::HOST)), small);
}

TEST(DiskTier, ABufferThatFitsNoFreedFileGetsANewOneAndFreeFilesBeyondThePeakAreRemoved) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    std::filesystem::path small_file;
    {
        auto small = move_to(resource, make_host_buffer(resource, test_bytes(5000, 32)), MemoryType::DISK);
        small_file = spill_files(resource).at(0);
    }
    // The files in use peaked at the small file's size; with the large file
    // both would take more, so the free small file goes.
    auto const large = test_bytes(mebibyte, 33);
    auto disk = move_to(resource, make_host_buffer(resource, large), MemoryType::DISK);
    EXPECT_EQ(statistic(resource, "memory.disk.files_created"), 2.0);
    EXPECT_EQ(statistic(resource, "memory.disk.files_removed"), 1.0);
    ASSERT_EQ(spill_files(resource).size(), 1U);
    EXPECT_NE(spill_files(resource).at(0), small_file);
    EXPECT_EQ(contents(move_to(resource, std::move(disk), MemoryType::HOST)), large);
}

TEST(DiskTier, FreeSpillFilesAreRemovedWhenAskedAndLaterSpillsMakeNewOnes) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    auto kept = move_to(resource, make_host_buffer(resource, test_bytes(5000, 35)), MemoryType::DISK);
    {
        auto const freed = move_to(resource, make_host_buffer(resource, test_bytes(5000, 36)), MemoryType::DISK);
    }
    ASSERT_EQ(spill_files(resource).size(), 2U) << "the freed buffer's file is kept for later buffers";

    resource.remove_free_spill_files();
    EXPECT_EQ(spill_files(resource).size(), 1U) << "only the file of the buffer still on disk is left";
    EXPECT_EQ(statistic(resource, "memory.disk.files_removed"), 1.0);

    auto const again = test_bytes(5000, 37);
    auto disk = move_to(resource, make_host_buffer(resource, again), MemoryType::DISK);
    EXPECT_EQ(statistic(resource, "memory.disk.files_created"), 3.0);
    EXPECT_EQ(contents(move_to(resource, std::move(disk), MemoryType::HOST)), again);
    EXPECT_EQ(contents(move_to(resource, std::move(kept), MemoryType::HOST)), test_bytes(5000, 35));
}

TEST(DiskTier, SpillFilesNeverOutnumberTheBuffersThatOnceWereOnDiskTogether) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    std::mt19937_64 random(34);
    std::vector<std::pair<Buffer, std::vector<std::byte>>> on_disk;
    std::size_t peak = 0;
    for (std::uint64_t step = 0; step < 300; ++step) {
        if (on_disk.empty() || (on_disk.size() < 12 && random() % 2 == 0)) {
            auto bytes = test_bytes(20'000, step);
            on_disk.emplace_back(move_to(resource, make_host_buffer(resource, bytes), MemoryType::DISK), bytes);
        } else {
            auto const index = random() % on_disk.size();
            auto& [buffer, bytes] = on_disk[index];
            EXPECT_EQ(contents(move_to(resource, std::move(buffer), MemoryType::HOST)), bytes);
            on_disk.erase(on_disk.begin() + static_cast<std::ptrdiff_t>(index));
        }
        peak = std::max(peak, on_disk.size());
        ASSERT_LE(spill_files(resource).size(), peak) << "step " << step;
    }
    EXPECT_EQ(spill_file_bytes(resource), peak * 20'480);
    EXPECT_GT(statistic(resource, "memory.disk.files_reused"), 100.0);
}

TEST(DiskTier, AFailedWriteOverAFreedFileRemovesIt) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    BufferResource resource(faulty_config(root, operations));
    // Spilled and freed at once: its file is kept.
    move_to(resource, make_host_buffer(resource, test_bytes(20'000, 35)), MemoryType::DISK);
    ASSERT_EQ(spill_files(resource).size(), 1U);
    auto const bytes = test_bytes(20'000, 36);
    auto buffer = make_host_buffer(resource, bytes);
    operations->fail_writes(EIO);
    EXPECT_THROW_WITH(move_to(resource, std::move(buffer), MemoryType::DISK), IoError, "Input/output error");
    EXPECT_EQ(contents(buffer), bytes);
    EXPECT_TRUE(spill_files(resource).empty());
    EXPECT_EQ(contents(move_to(resource, move_to(resource, std::move(buffer), MemoryType::DISK), MemoryType::HOST)),
              bytes);
}

TEST(DiskTier, AFreedFileRemovedBySomeoneElseIsMadeAgain) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    // Spilled and freed at once: its file is kept, until someone removes it.
    move_to(resource, make_host_buffer(resource, test_bytes(20'000, 37)), MemoryType::DISK);
    std::filesystem::remove(spill_files(resource).at(0));
    auto const bytes = test_bytes(20'000, 38);
    EXPECT_EQ(contents(move_to(resource, move_to(resource, make_host_buffer(resource, bytes), MemoryType::DISK),
                               MemoryType::HOST)),
              bytes);
    EXPECT_EQ(statistic(resource, "memory.disk.files_reused"), 1.0);
}

TEST_P(DiskTierCodec, SpillFilesFollowTheDocumentedFormat) {
    // docs/spill_format.md: the payload from offset 0 in whole 4 KiB blocks;
    // without a codec the buffer's bytes as they are, else one codec frame.
    BufferResource resource(config());
    auto const bytes = test_bytes(10'000, 5);
    auto disk = move_to(resource, make_host_buffer(resource, bytes), MemoryType::DISK);
    auto const stored = file_contents(spill_files(resource).at(0));
    EXPECT_EQ(stored.size() % 4096, 0U);
    auto const first_four = std::vector(stored.begin(), stored.begin() + std::min<std::ptrdiff_t>(4, std::ssize(stored)));
    switch (GetParam()) {
        case Codec::none: {
            auto padded = bytes;
            padded.resize(12'288);  // zeros up to the next 4 KiB
            EXPECT_EQ(stored, padded);
            break;
        }
        case Codec::lz4:
            EXPECT_EQ(first_four, byte_vector({0x04, 0x22, 0x4d, 0x18}));  // the LZ4 frame magic
            break;
        case Codec::zstd:
            EXPECT_EQ(first_four, byte_vector({0x28, 0xb5, 0x2f, 0xfd}));  // the Zstandard frame magic
            break;
    }
}

TEST(DiskTier, CompressingCodecsStoreCompressibleDataInFewerBytes) {
    for (auto const codec : {Codec::lz4, Codec::zstd}) {
        TemporaryDirectory root;
        auto config = test_config(root);
        config.spill_codec = codec;
        BufferResource resource(config);
        auto disk = move_to(resource, make_host_buffer(resource, test_bytes(mebibyte, 6, true)), MemoryType::DISK);
        EXPECT_LT(resource.statistics().get("memory.disk.write.bytes")->total, 0.1 * mebibyte) << codec;
        EXPECT_EQ(resource.memory_used(MemoryType::DISK), mebibyte) << "accounted uncompressed";
    }
}

TEST(DiskTier, MovingToTheTierABufferIsInLeavesItAndTheReservationAlone) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    auto buffer = make_host_buffer(resource, test_bytes(100, 7));
    auto reservation = resource.reserve(MemoryType::HOST, 100, AllowOverbooking::no);
    auto same = resource.move(std::move(buffer), reservation);
    EXPECT_EQ(same.mem_type(), MemoryType::HOST);
    EXPECT_EQ(reservation.size(), 100U);
    EXPECT_EQ(resource.memory_used(MemoryType::HOST), 100U);
}

TEST(DiskTier, AMoveThatTheReservationCannotPayForLeavesTheBuffer) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    auto buffer = make_host_buffer(resource, test_bytes(100, 8));
    auto reservation = resource.reserve(MemoryType::DISK, 99, AllowOverbooking::no);
    EXPECT_THROW_WITH(resource.move(std::move(buffer), reservation), ReservationError, "holds 99 B");
    EXPECT_EQ(buffer.size(), 100U);
    Buffer empty = std::move(buffer);
    EXPECT_THROW_WITH(resource.move(std::move(buffer), reservation), InvalidArgument, "non-empty");
}

TEST(DiskTier, MovesAreRecordedInStatistics) {
    TemporaryDirectory root;
    BufferResource resource(test_config(root));
    auto host = move_to(resource, move_to(resource, make_host_buffer(resource, test_bytes(5000, 9)), MemoryType::DISK),
                        MemoryType::HOST);
    auto const& statistics = resource.statistics();
    EXPECT_EQ(statistics.get("memory.copy.host_to_disk.bytes")->total, 5000.0);
    EXPECT_EQ(statistics.get("memory.copy.disk_to_host.bytes")->total, 5000.0);
    EXPECT_EQ(statistics.get("memory.copy.host_to_disk.seconds")->records, 1U);
    EXPECT_EQ(statistics.get("memory.disk.write.bytes")->total, 8192.0);
}

TEST(DiskTier, TheSpillQuotaFailsWithOutOfMemoryNamingMaxSpillBytes) {
    TemporaryDirectory root;
    auto config = test_config(root);
    config.disk_limit = SizeSpec::bytes(mebibyte);
    BufferResource resource(config);
    auto first = move_to(resource, make_host_buffer(resource, test_bytes(mebibyte / 2, 10)), MemoryType::DISK);
    EXPECT_THROW_WITH(
        move_to(resource, make_host_buffer(resource, test_bytes(mebibyte, 11)), MemoryType::DISK), OutOfMemory,
        "max_spill_bytes"
    );
}

TEST(DiskTier, NoSpaceLeftIsAnIoErrorThatLeavesTheBufferInHostAndNoFile) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    BufferResource resource(faulty_config(root, operations));
    auto const bytes = test_bytes(20'000, 12);
    auto buffer = make_host_buffer(resource, bytes);
    operations->fail_writes(ENOSPC);
    EXPECT_THROW_WITH(move_to(resource, std::move(buffer), MemoryType::DISK), IoError, "No space left on device");
    EXPECT_EQ(buffer.mem_type(), MemoryType::HOST);
    EXPECT_EQ(contents(buffer), bytes);
    EXPECT_TRUE(spill_files(resource).empty());
    EXPECT_EQ(resource.memory_used(MemoryType::DISK), 0U);
    EXPECT_EQ(resource.memory_reserved(MemoryType::DISK), 0U);
}

TEST(DiskTier, AReadErrorIsAnIoErrorAndTheBufferStaysOnDisk) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    BufferResource resource(faulty_config(root, operations));
    auto const bytes = test_bytes(20'000, 13);
    auto disk = move_to(resource, make_host_buffer(resource, bytes), MemoryType::DISK);
    operations->fail_reads(EIO);
    EXPECT_THROW_WITH(move_to(resource, std::move(disk), MemoryType::HOST), IoError, "Input/output error");
    EXPECT_EQ(disk.mem_type(), MemoryType::DISK);
    EXPECT_EQ(contents(move_to(resource, std::move(disk), MemoryType::HOST)), bytes);
}

TEST(DiskTier, ShortWritesAreContinued) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    auto config = faulty_config(root, operations);
    for (auto const codec : {Codec::none, Codec::lz4}) {
        config.spill_codec = codec;
        BufferResource resource(config);
        operations->short_writes(true);
        auto const bytes = test_bytes(50'000, 14);
        auto disk = move_to(resource, make_host_buffer(resource, bytes), MemoryType::DISK);
        operations->short_writes(false);
        EXPECT_EQ(contents(move_to(resource, std::move(disk), MemoryType::HOST)), bytes) << codec;
    }
}

TEST(DiskTier, FallsBackToBufferedIoWhereDirectIoIsRefused) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    operations->refuse_direct_io(true);
    BufferResource resource(faulty_config(root, operations));
    auto const bytes = test_bytes(10'000, 15);
    for (int i = 0; i < 2; ++i) {
        auto disk = move_to(resource, make_host_buffer(resource, bytes), MemoryType::DISK);
        EXPECT_EQ(contents(move_to(resource, std::move(disk), MemoryType::HOST)), bytes);
    }
    EXPECT_EQ(resource.statistics().get("memory.disk.direct_io_fallbacks")->total, 1.0);
}

TEST(DiskTier, AWriteOrReadThatRefusesDirectIoIsDoneAgainWithBufferedIo) {
    // The file system opens files with O_DIRECT but wants another alignment,
    // so the first direct write fails with EINVAL (some FUSE or ZFS setups).
    for (bool const together : {false, true}) {
        TemporaryDirectory root;
        auto operations = std::make_shared<FaultInjectingFileOperations>();
        BufferResource resource(faulty_config(root, operations));
        auto const bytes = test_bytes(10'000, 16);
        operations->fail_writes(EINVAL);
        std::vector<Buffer> buffers;
        buffers.push_back(make_host_buffer(resource, bytes));
        buffers.push_back(make_host_buffer(resource, bytes));
        if (together) {
            auto reservation = resource.reserve(MemoryType::DISK, 2 * bytes.size(), AllowOverbooking::no);
            resource.move_to_disk(buffers, reservation);
        } else {
            buffers[0] = move_to(resource, std::move(buffers[0]), MemoryType::DISK);
            buffers[1] = move_to(resource, std::move(buffers[1]), MemoryType::DISK);
        }
        EXPECT_EQ(statistic(resource, "memory.disk.direct_io_fallbacks"), 1.0) << together;
        auto const direct_opens = operations->direct_opens();
        EXPECT_EQ(contents(move_to(resource, std::move(buffers[0]), MemoryType::HOST)), bytes) << together;
        EXPECT_EQ(contents(move_to(resource, std::move(buffers[1]), MemoryType::HOST)), bytes) << together;
        EXPECT_EQ(operations->direct_opens(), direct_opens) << "direct I/O stays off";
    }
}

TEST(DiskTier, AReadThatRefusesDirectIoIsDoneAgainWithBufferedIo) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    BufferResource resource(faulty_config(root, operations));
    auto const bytes = test_bytes(10'000, 17);
    auto disk = move_to(resource, make_host_buffer(resource, bytes), MemoryType::DISK);
    EXPECT_EQ(operations->direct_opens(), 1);
    operations->fail_reads(EINVAL);
    EXPECT_EQ(contents(move_to(resource, std::move(disk), MemoryType::HOST)), bytes);
    EXPECT_EQ(statistic(resource, "memory.disk.direct_io_fallbacks"), 1.0);
    EXPECT_EQ(operations->direct_opens(), 2) << "the refused read's open, and no more";
}

TEST(DiskTier, AFileSystemThatWantsAnotherDirectIoAlignmentGetsBufferedIoFromItsFirstFile) {
    // statx's STATX_DIOALIGN, read on the first file opened with O_DIRECT:
    // a larger alignment than the tier's 4 KiB blocks, or none at all (no
    // direct I/O), turns direct I/O off before anything is written.
    for (auto const& [offset, memory] : {std::pair<std::uint32_t, std::uint32_t>{8192, 8192}, {4096, 8192}, {0, 0}}) {
        TemporaryDirectory root;
        auto operations = std::make_shared<FaultInjectingFileOperations>();
        operations->report_direct_io_alignment(offset, memory);
        BufferResource resource(faulty_config(root, operations));
        for (std::uint64_t seed = 0; seed < 2; ++seed) {
            auto const bytes = test_bytes(10'000, seed);
            auto disk = move_to(resource, make_host_buffer(resource, bytes), MemoryType::DISK);
            EXPECT_EQ(contents(move_to(resource, std::move(disk), MemoryType::HOST)), bytes);
        }
        EXPECT_EQ(operations->direct_opens(), 1) << "only the file whose statx said so, offset " << offset;
        EXPECT_EQ(statistic(resource, "memory.disk.direct_io_fallbacks"), 1.0);
    }
}

TEST(DiskTier, AFileSystemThatTakesASmallerDirectIoAlignmentKeepsDirectIo) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    operations->report_direct_io_alignment(512, 512);
    BufferResource resource(faulty_config(root, operations));
    auto const bytes = test_bytes(10'000, 3);
    auto disk = move_to(resource, make_host_buffer(resource, bytes), MemoryType::DISK);
    EXPECT_EQ(contents(move_to(resource, std::move(disk), MemoryType::HOST)), bytes);
    EXPECT_EQ(operations->direct_opens(), 2) << "the write and the read";
    EXPECT_FALSE(resource.statistics().get("memory.disk.direct_io_fallbacks").has_value());
}

TEST(DiskTier, EinvalFromBufferedIoIsAnIoError) {
    TemporaryDirectory root;
    auto operations = std::make_shared<FaultInjectingFileOperations>();
    auto config = faulty_config(root, operations);
    config.direct_io = false;
    BufferResource resource(config);
    auto const bytes = test_bytes(10'000, 18);
    auto buffer = make_host_buffer(resource, bytes);
    operations->fail_writes(EINVAL);
    EXPECT_THROW_WITH(move_to(resource, std::move(buffer), MemoryType::DISK), IoError, "Invalid argument");
    EXPECT_EQ(buffer.mem_type(), MemoryType::HOST);
    EXPECT_FALSE(resource.statistics().get("memory.disk.direct_io_fallbacks").has_value());
}

TEST(DiskTier, UsesDirectIoUnlessItIsTurnedOff) {
    for (bool const direct : {true, false}) {
        TemporaryDirectory root;
        auto operations = std::make_shared<FaultInjectingFileOperations>();
        auto config = faulty_config(root, operations);
        config.direct_io = direct;
        BufferResource resource(config);
        auto host = move_to(resource, move_to(resource, make_host_buffer(resource, test_bytes(10, 16)), MemoryType::DISK),
                            MemoryType::HOST);
        EXPECT_EQ(operations->direct_opens(), direct ? 2 : 0);
    }
}

TEST(DiskTier, AnUnwritableSpillDirectoryIsAnIoErrorAtConstruction) {
    TemporaryDirectory root;
    std::ofstream(root.path() / "a-file") << "not a directory";
    auto config = test_config(root);
    config.spill_directory = root.path() / "a-file" / "spill";
    EXPECT_THROW_WITH(BufferResource{config}, IoError, "set spill_directory to a writable directory");
}

TEST(DiskTier, ASpillRootFromTmpdirThatCannotBeMadeSaysSo) {
    TemporaryDirectory root;
    std::ofstream(root.path() / "a-file") << "x";
    spillway::test::ScopedEnvironment const tmpdir("TMPDIR", (root.path() / "a-file").string());
    MemoryConfig config;  // the default spill directory: $TMPDIR
    EXPECT_THROW_WITH(BufferResource{config}, IoError, "(by default $TMPDIR)");
}

TEST(DiskTier, EachResourceHasItsOwnDirectoryWithAnOwnerFileRemovedAtTheEnd) {
    TemporaryDirectory root;
    std::filesystem::path first_directory;
    {
        BufferResource first(test_config(root));
        BufferResource second(test_config(root));
        first_directory = first.spill_directory();
        EXPECT_NE(first.spill_directory(), second.spill_directory());
        EXPECT_EQ(first.spill_directory().parent_path(), root.path());
        std::ifstream owner(first.spill_directory() / "owner");
        pid_t pid = 0;
        owner >> pid;
        EXPECT_EQ(pid, getpid());
        auto disk = move_to(first, make_host_buffer(first, test_bytes(10, 17)), MemoryType::DISK);
    }
    EXPECT_FALSE(std::filesystem::exists(first_directory));
    EXPECT_TRUE(std::filesystem::is_empty(root.path()));
}

TEST(DiskTier, DirectoriesWhoseOwnerFileIsUnlockedOrGoneAreRemovedAtStartUpAndOthersAreKept) {
    TemporaryDirectory root;
    // The lock decides, not the pid: this directory names a live process (a
    // reused pid, or one seen from another PID namespace) but nobody holds it.
    auto const stale = root.path() / "spillway-stale";
    auto const stale_of_dead_pid = root.path() / "spillway-dead";
    auto const live = root.path() / "spillway-live";
    auto const unowned = root.path() / "spillway-unowned";
    // Without an owner file, removed only if named as a spill directory of a
    // pid that no process has, and holding spill files and nothing else: its
    // owner file went first in a removal that its process, killed, cut short.
    auto const dead = std::to_string(dead_pid());
    auto const partly_removed = root.path() / ("spillway-" + dead + "-0");
    auto const badly_named = root.path() / "spillway-notes";
    auto const other_files = root.path() / ("spillway-" + dead + "-1");
    auto const being_made = root.path() / ("spillway-" + dead + "-2");
    auto const of_live_pid = root.path() / ("spillway-" + std::to_string(getppid()) + "-3");
    auto const unrelated = root.path() / "someone-else";
    make_owned_directory(stale, std::to_string(getpid()));
    for (auto const& unowned_spill : {partly_removed, badly_named, other_files, of_live_pid}) {
        make_owned_directory(unowned_spill, dead);
        std::filesystem::remove(unowned_spill / "owner");
    }
    std::ofstream(other_files / "notes.txt") << "not spilled data";
    std::filesystem::create_directories(being_made);
    std::ofstream(being_made / "owner.new") << dead << "\n";
    // The same, a minute later: left by a process killed as it made it, or as
    // it removed it.
    auto const left_empty = root.path() / ("spillway-" + dead + "-4");
    auto const left_being_made = root.path() / ("spillway-" + dead + "-5");
    std::filesystem::create_directories(left_empty);
    std::filesystem::create_directories(left_being_made);
    std::ofstream(left_being_made / "owner.new") << dead << "\n";
    for (auto const& left : {left_empty, left_being_made}) {
        std::filesystem::last_write_time(left, std::filesystem::file_time_type::clock::now() - std::chrono::minutes(2));
    }
    make_owned_directory(stale_of_dead_pid, std::to_string(dead_pid()));
    make_owned_directory(live, std::to_string(dead_pid()));
    std::filesystem::create_directories(unowned);
    make_owned_directory(unrelated, std::to_string(dead_pid()));
    // flock locks belong to an open file description, so this one keeps the
    // resource's own attempt out as another process's would.
    int const held = ::open((live / "owner").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(held, 0);
    ASSERT_EQ(flock(held, LOCK_EX), 0);

    BufferResource resource(test_config(root));
    EXPECT_FALSE(std::filesystem::exists(stale));
    EXPECT_FALSE(std::filesystem::exists(stale_of_dead_pid));
    EXPECT_TRUE(std::filesystem::exists(live / "buffer-0"));
    EXPECT_TRUE(std::filesystem::exists(unowned)) << "no pid in its name";
    EXPECT_FALSE(std::filesystem::exists(partly_removed));
    EXPECT_TRUE(std::filesystem::exists(badly_named / "buffer-0"));
    EXPECT_TRUE(std::filesystem::exists(other_files / "buffer-0"));
    EXPECT_TRUE(std::filesystem::exists(being_made / "owner.new"));
    EXPECT_FALSE(std::filesystem::exists(left_empty));
    EXPECT_FALSE(std::filesystem::exists(left_being_made));
    EXPECT_TRUE(std::filesystem::exists(of_live_pid / "buffer-0"));
    EXPECT_TRUE(std::filesystem::exists(unrelated));
    EXPECT_EQ(resource.statistics().get("memory.disk.stale_directories_removed")->total, 5.0);
    ::close(held);
}

TEST(DiskTier, AResourceHoldsTheLockOfItsOwnerFileSoThatOthersKeepItsDirectory) {
    TemporaryDirectory root;
    BufferResource first(test_config(root));
    int const probe = ::open((first.spill_directory() / "owner").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(probe, 0);
    EXPECT_NE(flock(probe, LOCK_EX | LOCK_NB), 0) << "the owner file of a live resource is not locked";
    EXPECT_EQ(errno, EWOULDBLOCK);
    ::close(probe);

    BufferResource second(test_config(root));
    EXPECT_TRUE(std::filesystem::exists(first.spill_directory() / "owner"));
    EXPECT_FALSE(second.statistics().get("memory.disk.stale_directories_removed").has_value());
}
