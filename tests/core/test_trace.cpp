#include <spillway/core/error.hpp>
#include <spillway/core/trace.hpp>

#include <common/error_matchers.hpp>
#include <common/temporary_directory.hpp>

#include <fstream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

using namespace spillway;

namespace {

nlohmann::json read_json(std::filesystem::path const& path) {
    std::ifstream file(path);
    return nlohmann::json::parse(file);
}

}  // namespace

TEST(Trace, RecordsNothingUntilStarted) {
    trace::stop();
    trace::start();
    trace::stop();
    {
        trace::Span span("spill", "spill");
    }
    EXPECT_EQ(trace::counts().kept, 0u);
}

TEST(Trace, WritesCompleteEventsWithArgumentsAndThreadNames) {
    test::TemporaryDirectory directory;
    trace::start();
    std::thread worker([] {
        trace::name_this_thread("rank 1");
        trace::Span span("send", "send chunk");
        span.set_bytes(4096);
        span.set_id(7);
    });
    worker.join();
    {
        trace::Span span("spill", "spill");
    }
    trace::stop();
    auto const path = directory.path() / "trace.json";
    trace::write(path);

    auto const json = read_json(path);
    auto const& events = json.at("traceEvents");
    std::set<std::string> names;
    std::set<std::int64_t> threads;
    for (auto const& event : events) {
        names.insert(event.at("name").get<std::string>());
        if (event.at("ph") == "X") {
            threads.insert(event.at("tid").get<std::int64_t>());
            EXPECT_GE(event.at("dur").get<std::int64_t>(), 0);
        }
        if (event.at("name") == "send chunk") {
            EXPECT_EQ(event.at("cat"), "send");
            EXPECT_EQ(event.at("args").at("bytes"), 4096);
            EXPECT_EQ(event.at("args").at("id"), 7);
        }
        if (event.at("ph") == "M") {
            EXPECT_EQ(event.at("args").at("name"), "rank 1");
        }
    }
    EXPECT_EQ(names, (std::set<std::string>{"send chunk", "spill", "thread_name"}));
    EXPECT_EQ(threads.size(), 2u) << "the two spans ran on different threads";
    EXPECT_EQ(trace::counts().kept, 2u);
}

TEST(Trace, KeepsAtMostTheGivenNumberOfEventsAndCountsTheRest) {
    trace::start(2);
    for (int i = 0; i < 5; ++i) {
        trace::Span span("item", "item");
    }
    trace::stop();
    EXPECT_EQ(trace::counts().kept, 2u);
    EXPECT_EQ(trace::counts().dropped, 3u);
}

TEST(Trace, ReportsAFileThatCannotBeWritten) {
    test::TemporaryDirectory directory;
    auto const not_a_directory = directory.path() / "file";
    std::ofstream(not_a_directory) << "x";
    trace::start();
    trace::stop();
    EXPECT_THROW_WITH(trace::write(not_a_directory / "trace.json"), IoError, "cannot open trace file");
}

TEST(Trace, RecordsAnIntervalGivenItsEndsOnlyWhileRecording) {
    test::TemporaryDirectory directory;
    auto const start = std::chrono::steady_clock::now();
    trace::stop();
    trace::record("item", "before", start, start + std::chrono::milliseconds(1));
    trace::start();
    trace::record("item", "block", start + std::chrono::milliseconds(2), start + std::chrono::milliseconds(5), 64, 3);
    trace::stop();
    trace::record("item", "after", start, start + std::chrono::milliseconds(1));
    auto const path = directory.path() / "trace.json";
    trace::write(path);

    auto const events = read_json(path).at("traceEvents");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].at("name"), "block");
    EXPECT_EQ(events[0].at("dur"), 3000);
    EXPECT_EQ(events[0].at("args").at("bytes"), 64);
    EXPECT_EQ(events[0].at("args").at("id"), 3);
}
