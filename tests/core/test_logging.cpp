#include <spillway/core/error.hpp>
#include <spillway/core/logging.hpp>

#include <common/error_matchers.hpp>

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

using namespace spillway;

namespace {

/// Captures log lines for the duration of a test and restores the logger.
class CapturedLog {
  public:
    explicit CapturedLog(LogLevel level) : previous_level_(log_level()) {
        set_log_level(level);
        previous_sink_ = set_log_sink([this](LogLevel at, std::string_view text) {
            lines_.emplace_back(at, std::string(text));
        });
    }
    ~CapturedLog() {
        set_log_sink(std::move(previous_sink_));
        set_log_level(previous_level_);
    }
    std::vector<std::pair<LogLevel, std::string>> const& lines() const { return lines_; }

  private:
    LogLevel previous_level_;
    LogSink previous_sink_;
    std::vector<std::pair<LogLevel, std::string>> lines_;
};

}  // namespace

TEST(Logging, WritesOnlyMessagesAtOrAboveTheLevel) {
    CapturedLog log(LogLevel::info);
    SPILLWAY_LOG(debug, "hidden");
    SPILLWAY_LOG(info, "spilled " << 42 << " bytes");
    SPILLWAY_LOG(error, "disk full");
    ASSERT_EQ(log.lines().size(), 2u);
    EXPECT_EQ(log.lines()[0].first, LogLevel::info);
    EXPECT_EQ(log.lines()[0].second, "spilled 42 bytes");
    EXPECT_EQ(log.lines()[1].second, "disk full");
}

TEST(Logging, BuildsNoMessageWhenTheLevelIsDisabled) {
    CapturedLog log(LogLevel::off);
    int evaluated = 0;
    SPILLWAY_LOG(error, "count " << ++evaluated);
    EXPECT_EQ(evaluated, 0);
    EXPECT_TRUE(log.lines().empty());
}

TEST(Logging, ParsesLevelNamesAndRejectsOthers) {
    EXPECT_EQ(parse_log_level("DEBUG"), LogLevel::debug);
    EXPECT_EQ(parse_log_level("off"), LogLevel::off);
    EXPECT_EQ(to_string(LogLevel::warn), "warn");
    EXPECT_THROW_WITH(parse_log_level("loud"), InvalidArgument, "invalid log level 'loud'");
}
