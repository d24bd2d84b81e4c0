#include <spillway/core/error.hpp>
#include <spillway/core/statistics.hpp>

#include <common/error_matchers.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

using namespace spillway;
using namespace std::chrono_literals;

TEST(Statistics, KeepsRecordsTotalAndMaxPerName) {
    Statistics statistics;
    statistics.add_bytes("spill.bytes", 100);
    statistics.add_bytes("spill.bytes", 300);
    statistics.add_count("spill.calls");
    statistics.add_duration("spill.time", 1500ms);
    auto const bytes = statistics.get("spill.bytes");
    ASSERT_TRUE(bytes.has_value());
    EXPECT_EQ(bytes->unit, Statistics::Unit::bytes);
    EXPECT_EQ(bytes->records, 2u);
    EXPECT_EQ(bytes->total, 400.0);
    EXPECT_EQ(bytes->max, 300.0);
    EXPECT_EQ(statistics.get("spill.calls")->total, 1.0);
    EXPECT_DOUBLE_EQ(statistics.get("spill.time")->total, 1.5);
    EXPECT_FALSE(statistics.get("nothing").has_value());
}

TEST(Statistics, RejectsAUnitDifferentFromTheFirstRecord) {
    Statistics statistics;
    statistics.add_bytes("x", 1);
    EXPECT_THROW_WITH(statistics.add_count("x"), InvalidArgument, "statistic 'x' holds bytes, cannot record count");
}

TEST(Statistics, CountsEveryRecordFromManyThreads) {
    Statistics statistics;
    constexpr int threads = 4;
    constexpr int per_thread = 10'000;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&] {
            for (int i = 0; i < per_thread; ++i) {
                statistics.add_bytes("bytes", 2);
            }
        });
    }
    for (auto& worker : workers) {
        worker.join();
    }
    EXPECT_EQ(statistics.get("bytes")->records, static_cast<std::uint64_t>(threads * per_thread));
    EXPECT_EQ(statistics.get("bytes")->total, 2.0 * threads * per_thread);
}

TEST(Statistics, ReportsForPeopleAndAsJson) {
    Statistics statistics;
    statistics.add_bytes("memory.spill.bytes", 3ull << 20);
    statistics.add_count("memory.spill.calls", 2);
    auto const report = statistics.report();
    EXPECT_NE(report.find("memory.spill.bytes"), std::string::npos);
    EXPECT_NE(report.find("3.00 MiB"), std::string::npos);
    auto const json = nlohmann::json::parse(statistics.to_json());
    EXPECT_EQ(json["memory.spill.bytes"]["unit"], "bytes");
    EXPECT_EQ(json["memory.spill.bytes"]["total"], 3 << 20);
    EXPECT_EQ(json["memory.spill.calls"]["records"], 1);
    statistics.clear();
    EXPECT_TRUE(statistics.snapshot().empty());
}

TEST(Statistics, TheMaxOfNegativeValuesIsTheLargestOfThem) {
    Statistics statistics;
    statistics.record("balance", -5, Statistics::Unit::count);
    statistics.record("balance", -7, Statistics::Unit::count);
    EXPECT_EQ(statistics.get("balance")->max, -5.0);
    EXPECT_EQ(statistics.get("balance")->total, -12.0);
}

TEST(Statistics, AnyNameGivesOneReportLineAndValidJson) {
    Statistics statistics;
    std::string const long_name(300, 'n');
    statistics.add_bytes(long_name, 2048);
    statistics.add_count("\xff\xfe not UTF-8", 3);
    statistics.record("huge", 1e300, Statistics::Unit::count);
    auto const report = statistics.report();
    EXPECT_EQ(std::count(report.begin(), report.end(), '\n'), 4) << report;
    EXPECT_NE(report.find(long_name + " "), std::string::npos);
    EXPECT_NE(report.find("2.00 KiB"), std::string::npos);
    auto const json = nlohmann::json::parse(statistics.to_json());
    EXPECT_EQ(json[long_name]["total"], 2048);
    EXPECT_EQ(json["\xef\xbf\xbd\xef\xbf\xbd not UTF-8"]["total"], 3);
}

TEST(ScopedTimer, RecordsOneDurationWhenItLeavesScope) {
    Statistics statistics;
    {
        ScopedTimer timer(statistics, "phase");
        EXPECT_FALSE(statistics.get("phase").has_value());
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // at least this long
    }
    auto const phase = statistics.get("phase");
    ASSERT_TRUE(phase.has_value());
    EXPECT_EQ(phase->unit, Statistics::Unit::seconds);
    EXPECT_EQ(phase->records, 1u);
    EXPECT_GE(phase->total, 0.002);
}
