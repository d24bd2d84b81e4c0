#include <algorithm>
#include <sstream>
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
