#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "progress.hpp"

using namespace spillway::cli;
using testing::HasSubstr;

TEST(Progress, PrintsALineAtEachTenthAndAFinalOne) {
    std::ostringstream out;
    Progress progress(Progress::Style::lines, out);
    progress.start("verify", 100, Progress::Unit::items);
    for (int step = 0; step < 100; ++step) {
        progress.advance(1);
    }
    progress.finish();
    auto const text = out.str();
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 10) << text;
    EXPECT_THAT(text, HasSubstr("verify:  10% 10 of 100"));
    EXPECT_THAT(text, HasSubstr("verify: 100% 100 of 100"));
    EXPECT_THAT(text, HasSubstr("done in"));
}

TEST(Progress, DrawsABarInPlaceWithBytes) {
    std::ostringstream out;
    Progress progress(Progress::Style::bar, out);
    progress.start("partition", 4096, Progress::Unit::bytes);
    progress.advance(2048);
    progress.finish();
    auto const text = out.str();
    EXPECT_EQ(text.front(), '\r');
    EXPECT_THAT(text, HasSubstr("partition [###############...............]  50% 2.00 KiB of 4.00 KiB"));
    EXPECT_EQ(text.back(), '\n');
}

TEST(Progress, QuietPrintsNothing) {
    std::ostringstream out;
    Progress progress(Progress::Style::none, out);
    progress.start("generate", 10, Progress::Unit::items);
    progress.advance(10);
    progress.finish();
    EXPECT_EQ(out.str(), "");
    EXPECT_EQ(Progress::choose(true, 0), Progress::Style::none);
}

TEST(Progress, AListenerIsToldWhatABarWouldShowAndTheLastCall) {
    struct Call {
        std::string phase;
        std::uint64_t done, total;
        bool bytes, last;
    };
    std::vector<Call> calls;
    Progress progress([&](std::string const& phase, std::uint64_t done, std::uint64_t total, bool bytes, bool last) {
        calls.push_back({phase, done, total, bytes, last});
    });
    progress.start("partition", 4096, Progress::Unit::bytes);
    progress.advance(1024);
    progress.advance(1024);
    progress.finish();
    progress.start("verify", 0, Progress::Unit::items);
    progress.advance(7);
    progress.finish();
    ASSERT_GE(calls.size(), 2U);
    auto const& partition_end = calls[calls.size() - 2];
    EXPECT_EQ(partition_end.phase, "partition");
    EXPECT_EQ(partition_end.done, 2048U);
    EXPECT_EQ(partition_end.total, 4096U);
    EXPECT_TRUE(partition_end.bytes);
    EXPECT_TRUE(partition_end.last);
    auto const& verify_end = calls.back();
    EXPECT_EQ(verify_end.phase, "verify");
    EXPECT_EQ(verify_end.done, 7U);
    EXPECT_EQ(verify_end.total, 0U);
    EXPECT_FALSE(verify_end.bytes);
    EXPECT_TRUE(verify_end.last);
    EXPECT_EQ(std::count_if(calls.begin(), calls.end(), [](Call const& call) { return call.last; }), 2);
}

TEST(Progress, CountsWhatManyThreadsAdvance) {
    std::ostringstream out;
    Progress progress(Progress::Style::lines, out);
    progress.start("shuffle", 4000, Progress::Unit::items);
    std::vector<std::thread> threads;
    for (int thread = 0; thread < 4; ++thread) {
        threads.emplace_back([&] {
            for (int step = 0; step < 1000; ++step) {
                progress.advance(1);
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    progress.finish();
    EXPECT_THAT(out.str(), HasSubstr("shuffle: 100% 4000 of 4000"));
}

TEST(Progress, CompletingAPhaseCountsWhatNoStepCounted) {
    std::ostringstream out;
    Progress progress(Progress::Style::lines, out);
    progress.start("partition", 100, Progress::Unit::bytes);
    progress.advance(92);  // the blocks; a header line of 8 bytes is in none
    progress.complete();
    progress.complete();  // nothing more: done is the total
    progress.finish();
    EXPECT_THAT(out.str(), HasSubstr("partition: 100% 100 B of 100 B"));
    EXPECT_THAT(out.str(), testing::Not(HasSubstr("108 B")));
}
