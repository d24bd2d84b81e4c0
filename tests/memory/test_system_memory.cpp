#include <spillway/memory/system_memory.hpp>

#include <common/temporary_directory.hpp>

#include <fstream>

#include <gtest/gtest.h>

using namespace spillway::memory;

namespace {

void write_file(std::filesystem::path const& path, std::string const& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text << "\n";
}

}  // namespace

TEST(SystemMemory, HostCapacityIsPositiveAndAtMostThePhysicalMemory) {
    EXPECT_GT(host_memory_capacity(), 0U);
    EXPECT_LE(host_memory_capacity(), physical_memory());
}

TEST(SystemMemory, ReadsTheCgroupV2LimitOfTheProcessGroup) {
    spillway::test::TemporaryDirectory root;
    write_file(root.path() / "job/worker/memory.max", "1073741824");
    EXPECT_EQ(cgroup_memory_limit(root.path(), "0::/job/worker\n"), 1073741824U);
}

TEST(SystemMemory, TakesTheSmallestLimitOnThePathToTheRoot) {
    spillway::test::TemporaryDirectory root;
    write_file(root.path() / "job/memory.max", "2000");
    write_file(root.path() / "job/worker/memory.max", "max");
    EXPECT_EQ(cgroup_memory_limit(root.path(), "0::/job/worker\n"), 2000U);
}

TEST(SystemMemory, ReadsTheCgroupV1MemoryController) {
    spillway::test::TemporaryDirectory root;
    write_file(root.path() / "memory/box/memory.limit_in_bytes", "3000");
    write_file(root.path() / "cpu/box/cpu.shares", "1024");
    EXPECT_EQ(cgroup_memory_limit(root.path(), "4:cpu,cpuacct:/box\n3:memory:/box\n0::/\n"), 3000U);
}

TEST(SystemMemory, TreatsCgroupV1sHugeDefaultAsNoLimit) {
    spillway::test::TemporaryDirectory root;
    write_file(root.path() / "memory/box/memory.limit_in_bytes", "9223372036854771712");
    EXPECT_EQ(cgroup_memory_limit(root.path(), "3:memory:/box\n"), std::nullopt);
}

TEST(SystemMemory, ReportsNoLimitWhenNoneIsSetOrReadable) {
    spillway::test::TemporaryDirectory root;
    write_file(root.path() / "memory.max", "max");
    EXPECT_EQ(cgroup_memory_limit(root.path(), "0::/\n"), std::nullopt);
    EXPECT_EQ(cgroup_memory_limit(root.path(), "garbage\n"), std::nullopt);
}
