#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "run_summary.hpp"

using namespace spillway::cli;
using testing::HasSubstr;

namespace {

RunSummary sample() {
    RunSummary summary;
    summary.command = "shuffle";
    summary.settings["ranks"] = 4;
    summary.settings["comm"] = "local";
    summary.rows = 1234567;
    summary.bytes = std::uint64_t{3} << 30;
    summary.seconds = 2.0;
    summary.phases = {{"generate", 0.5}, {"exchange", 1.5}};
    summary.spilled_bytes = std::uint64_t{1} << 30;
    summary.read_back_bytes = std::uint64_t{1} << 30;
    summary.sent_bytes = std::uint64_t{3} << 29;
    summary.peak_memory = {{"HOST", std::uint64_t{256} << 20, {std::uint64_t{200} << 20, std::uint64_t{250} << 20}},
                           {"DISK", std::uint64_t{1} << 40, {0, std::uint64_t{1} << 30}}};
    summary.peak_resident_bytes = std::uint64_t{700} << 20;
    summary.verified = true;
    summary.verification = {"every row is in its partition"};
    return summary;
}

}  // namespace

TEST(RunSummary, JsonHoldsEveryFigure) {
    auto const json = nlohmann::json::parse(sample().to_json(ExitCode::success));
    EXPECT_EQ(json.at("command"), "shuffle");
    EXPECT_EQ(json.at("verified"), true);
    EXPECT_EQ(json.at("settings").at("ranks"), 4);
    EXPECT_EQ(json.at("rows"), 1234567);
    EXPECT_EQ(json.at("bytes"), std::uint64_t{3} << 30);
    EXPECT_EQ(json.at("seconds"), 2.0);
    EXPECT_EQ(json.at("throughput_bytes_per_second"), static_cast<double>(std::uint64_t{3} << 30) / 2.0);
    EXPECT_EQ(json.at("phases").at("exchange"), 1.5);
    EXPECT_EQ(json.at("spilled_bytes"), std::uint64_t{1} << 30);
    EXPECT_EQ(json.at("read_back_bytes"), std::uint64_t{1} << 30);
    EXPECT_EQ(json.at("sent_bytes"), std::uint64_t{3} << 29);
    EXPECT_EQ(json.at("peak_memory").at("HOST").at("ranks")[1], std::uint64_t{250} << 20);
    EXPECT_EQ(json.at("peak_memory").at("DISK").at("limit"), std::uint64_t{1} << 40);
    EXPECT_EQ(json.at("peak_resident_bytes"), std::uint64_t{700} << 20);
    EXPECT_EQ(json.at("verification")[0], "every row is in its partition");
}

TEST(RunSummary, SizeSettingsAreBytesInJsonAndFormattedInText) {
    auto summary = sample();
    summary.settings["memory_limit_bytes"] = std::uint64_t{256} << 20;
    auto const json = nlohmann::json::parse(summary.to_json(ExitCode::success));
    EXPECT_EQ(json.at("settings").at("memory_limit_bytes"), std::uint64_t{256} << 20);
    EXPECT_THAT(summary.to_text(), HasSubstr("settings     ranks 4, comm local, memory_limit 256.00 MiB\n"));
}

TEST(RunSummary, JsonCarriesTheExitCodeAndTheErrorOfAFailedRun) {
    auto summary = sample();
    summary.verified = false;
    auto const json = nlohmann::json::parse(summary.to_json(ExitCode::verification_failed, "3 rows are misplaced"));
    EXPECT_EQ(json.at("exit_code"), 3);
    EXPECT_EQ(json.at("error"), "3 rows are misplaced");
    EXPECT_FALSE(nlohmann::json::parse(sample().to_json(ExitCode::success)).contains("error"));
}

TEST(RunSummary, AFailureBeforeASummaryIsAJsonObjectWithTheErrorAndTheExitCode) {
    auto const json = nlohmann::json::parse(failure_json("partition", ExitCode::usage, "no such key"));
    EXPECT_EQ(json, nlohmann::json::parse(
                        R"({"command": "partition", "verified": false, "exit_code": 2, "error": "no such key"})"));
    auto const unknown = nlohmann::json::parse(failure_json("", ExitCode::usage, "a command is required"));
    EXPECT_FALSE(unknown.contains("command")) << "no command was given";
}

TEST(RunSummary, JsonSaysNullWhenThereIsNothingToVerify) {
    auto summary = sample();
    summary.verified.reset();
    EXPECT_TRUE(nlohmann::json::parse(summary.to_json(ExitCode::success)).at("verified").is_null());
}

TEST(RunSummary, AVerificationErrorIsItsLinesOnOneLineOnlyWhenItFailed) {
    auto summary = sample();
    EXPECT_EQ(summary.verification_error(), "");
    summary.verified.reset();
    EXPECT_EQ(summary.verification_error(), "");
    summary.verified = false;
    summary.verification = {"3 rows are missing", "checksum differs"};
    EXPECT_EQ(summary.verification_error(), "verification failed: 3 rows are missing; checksum differs");
}

TEST(RunSummary, BytesSentToOtherRanksAreLeftOutForAJobWithoutRanks) {
    auto summary = sample();
    summary.sent_bytes.reset();
    EXPECT_FALSE(nlohmann::json::parse(summary.to_json(ExitCode::success)).contains("sent_bytes"));
    EXPECT_THAT(summary.to_text(), testing::Not(HasSubstr("sent ")));
}

TEST(RunSummary, TextIsForPeople) {
    auto const text = sample().to_text();
    EXPECT_THAT(text, HasSubstr("spillway shuffle: verified\n"));
    EXPECT_THAT(text, HasSubstr("settings     ranks 4, comm local\n"));
    EXPECT_THAT(text, HasSubstr("rows         1,234,567\n"));
    EXPECT_THAT(text, HasSubstr("bytes        3.00 GiB\n"));
    EXPECT_THAT(text, HasSubstr("time         2.0 s (generate 500 ms, exchange 1.5 s)\n"));
    EXPECT_THAT(text, HasSubstr("throughput   1.50 GiB/s\n"));
    EXPECT_THAT(text, HasSubstr("spilled      1.00 GiB, read back 1.00 GiB\n"));
    EXPECT_THAT(text, HasSubstr("sent         1.50 GiB to other ranks\n"));
    EXPECT_THAT(text, HasSubstr("peak HOST    250.00 MiB on the busiest rank (limit 256.00 MiB per rank), 450.00 MiB "
                                "over 2 ranks\n"));
    EXPECT_THAT(text, HasSubstr("peak RSS     700.00 MiB\n"));
    auto overbooked = sample();
    overbooked.peak_memory.front().ranks.back() = std::uint64_t{300} << 20;
    EXPECT_THAT(overbooked.to_text(),
                HasSubstr("peak HOST    300.00 MiB on the busiest rank (limit 256.00 MiB per rank), 500.00 MiB over 2 "
                          "ranks; over the limit where nothing could spill\n"));
    auto failed = sample();
    failed.verified = false;
    EXPECT_THAT(failed.to_text(), HasSubstr("spillway shuffle: VERIFICATION FAILED\n"));
}
