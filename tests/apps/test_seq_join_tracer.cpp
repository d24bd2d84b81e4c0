#include <filesystem>
#include <fstream>
#include <numeric>
#include <ranges>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <spillway/core/trace.hpp>
#include <spillway/exec/seq_join.hpp>
#include <spillway/exec/thread_pool.hpp>

#include <common/temporary_directory.hpp>

#include "seq_join_tracer.hpp"

using namespace spillway;

TEST(SeqJoinTracer, RecordsOneEventPerItemWithItsIndex) {
    exec::ThreadPool pool(exec::ThreadPool::Config{2});
    trace::start();
    {
        cli::SeqJoinTracer tracer("square", 4, std::chrono::nanoseconds::zero());
        auto const square = [](int value, std::stop_token const&) { return value * value; };
        int sum = 0;
        for (int result : exec::seq_join(pool, 4, std::views::iota(0, 20), square, tracer.observe())) {
            sum += result;
        }
        EXPECT_EQ(sum, 2470);
    }
    trace::stop();
    test::TemporaryDirectory directory;
    trace::write(directory.path() / "trace.json");
    std::ifstream file(directory.path() / "trace.json");
    std::vector<int> ids;
    auto const json = nlohmann::json::parse(file);
    for (auto const& event : json.at("traceEvents")) {
        EXPECT_EQ(event.at("cat"), "seq_join");
        EXPECT_EQ(event.at("name"), "square");
        EXPECT_GE(event.at("dur").get<std::int64_t>(), 0);
        ids.push_back(event.at("args").at("id").get<int>());
    }
    std::sort(ids.begin(), ids.end());
    std::vector<int> expected(20);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(ids, expected);
}

TEST(SeqJoinTracer, InstallsNoObserverWhileTracingIsOff) {
    trace::stop();
    cli::SeqJoinTracer tracer("idle", 2, std::chrono::seconds(5));
    auto const options = tracer.observe();
    EXPECT_FALSE(static_cast<bool>(options.observer));
    EXPECT_EQ(options.stall_timeout, std::chrono::seconds(5));
    EXPECT_EQ(options.grain, 1U);
    EXPECT_EQ(options.prefetch, 0U);
}
