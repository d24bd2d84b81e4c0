#include <sys/resource.h>

#include <csignal>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <spillway/core/error.hpp>

#include <common/temporary_directory.hpp>

#include "run_job.hpp"

using namespace spillway;
using namespace spillway::cli;
using testing::HasSubstr;

namespace {

/// A job that returns a summary it was given, or throws while running, and
/// counts its commits in `*commits` if given.
class FixedJob final : public Job {
  public:
    explicit FixedJob(std::optional<bool> verified, bool fail = false, int* commits = nullptr)
        : verified_(verified), fail_(fail), commits_(commits) {}
    void commit() override {
        if (commits_ != nullptr) {
            ++*commits_;
        }
    }
    RunSummary run(Progress&) override {
        if (fail_) {
            SPILLWAY_FAIL("the disk is full", IoError);
        }
        RunSummary summary;
        summary.command = "fixed";
        summary.verified = verified_;
        summary.verification = {verified_.value_or(true) ? "all good" : "3 rows are in the wrong file"};
        return summary;
    }

  private:
    std::optional<bool> verified_;
    bool fail_;
    int* commits_;
};

struct Outcome {
    ExitCode code;
    std::string out;
    std::string err;
};

Outcome run(std::function<std::unique_ptr<Job>()> const& make_job, OutputFlags const& output = {true, false, {}}) {
    std::ostringstream out;
    std::ostringstream err;
    Processes const alone(Options(), false, nullptr, nullptr);
    auto const code = run_job(make_job, "fixed", output, alone, out, err);
    return {code, out.str(), err.str()};
}

}  // namespace

TEST(RunJob, AVerifiedJobSucceedsAndPrintsItsSummary) {
    auto const outcome = run([] { return std::make_unique<FixedJob>(true); });
    EXPECT_EQ(outcome.code, ExitCode::success);
    EXPECT_THAT(outcome.out, HasSubstr("\"verified\":true"));
    EXPECT_EQ(outcome.err, "");
}

TEST(RunJob, TheOutputIsCommittedOnlyOnceTheTraceIsWritten) {
    int commits = 0;
    auto const written = run([&] { return std::make_unique<FixedJob>(true, false, &commits); });
    EXPECT_EQ(written.code, ExitCode::success);
    EXPECT_EQ(commits, 1);

    // /dev/full opens, and refuses every write with ENOSPC.
    commits = 0;
    auto const full = run([&] { return std::make_unique<FixedJob>(true, false, &commits); },
                          OutputFlags{true, false, "/dev/full"});
    EXPECT_EQ(full.code, ExitCode::failure);
    EXPECT_THAT(full.err, HasSubstr("cannot write trace file '/dev/full': No space left on device"));
    EXPECT_EQ(commits, 0) << "a run whose trace failed leaves no output";
}

TEST(RunJob, ATraceThatCannotBeWrittenLeavesTheFileThatWasThereWhole) {
    test::TemporaryDirectory directory;
    auto const trace = directory.path() / "trace.json";
    std::string const earlier = "{\"traceEvents\": []}";
    std::ofstream(trace) << earlier;
    // A file size limit smaller than any trace makes the write fail with
    // EFBIG (SIGXFSZ ignored), as a full disk fails it part of the way.
    struct rlimit saved {};
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
    auto const previous_handler = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit const small{.rlim_cur = 16, .rlim_max = saved.rlim_max};
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
    int commits = 0;
    auto const outcome = run([&] { return std::make_unique<FixedJob>(true, false, &commits); },
                             OutputFlags{true, false, trace});
    setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, previous_handler);

    EXPECT_EQ(outcome.code, ExitCode::failure);
    EXPECT_THAT(outcome.err, HasSubstr("File too large"));
    EXPECT_EQ(commits, 0);
    std::ifstream file(trace);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(file), {}), earlier) << "the trace there was truncated";
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(directory.path()), {}), 1)
        << "the partial trace was left beside it";
}

TEST(RunJob, AFailureWithoutAMessageCommitsNothingEither) {
    class Silent final : public Job {
      public:
        explicit Silent(int* commits) : commits_(commits) {}
        void commit() override { ++*commits_; }
        RunSummary run(Progress&) override { throw std::runtime_error(""); }

      private:
        int* commits_;
    };
    int commits = 0;
    auto const outcome = run([&] { return std::make_unique<Silent>(&commits); });
    EXPECT_EQ(outcome.code, ExitCode::failure);
    EXPECT_EQ(commits, 0);
}

TEST(RunJob, AFailedVerificationIsExitCodeThreeAndSaysWhy) {
    auto const outcome = run([] { return std::make_unique<FixedJob>(false); }, OutputFlags{false, true, {}});
    EXPECT_EQ(outcome.code, ExitCode::verification_failed);
    EXPECT_EQ(to_int(outcome.code), 3);
    EXPECT_EQ(outcome.out, "") << "quiet";
    EXPECT_THAT(outcome.err, HasSubstr("verification failed:\n  3 rows are in the wrong file"));
}

TEST(RunJob, AJobWithNothingToVerifySucceeds) {
    EXPECT_EQ(run([] { return std::make_unique<FixedJob>(std::nullopt); }).code, ExitCode::success);
}

TEST(RunJob, AnErrorBeforeTheWorkIsAUsageErrorAndOneDuringItAFailure) {
    auto const usage = run([]() -> std::unique_ptr<Job> { SPILLWAY_FAIL("no such key", InvalidArgument); });
    EXPECT_EQ(usage.code, ExitCode::usage);
    EXPECT_THAT(usage.err, HasSubstr("spillway: no such key"));
    auto const unreadable = run([]() -> std::unique_ptr<Job> { SPILLWAY_FAIL("cannot read", IoError); });
    EXPECT_EQ(unreadable.code, ExitCode::usage) << "found before any work started";

    auto const failure = run([] { return std::make_unique<FixedJob>(true, true); });
    EXPECT_EQ(failure.code, ExitCode::failure);
    EXPECT_THAT(failure.err, HasSubstr("spillway: the disk is full (IoError)")) << "a failure names its type";
}

TEST(RunJob, WithJsonASucceededRunReportsExitCodeZeroAndNoError) {
    auto const outcome = run([] { return std::make_unique<FixedJob>(true); });
    auto const json = nlohmann::json::parse(outcome.out);
    EXPECT_EQ(json.at("exit_code"), 0);
    EXPECT_FALSE(json.contains("error"));
}

TEST(RunJob, WithJsonEveryFailurePrintsOneJsonObjectWithTheErrorAndTheExitCode) {
    auto const usage = run([]() -> std::unique_ptr<Job> { SPILLWAY_FAIL("no such key", InvalidArgument); });
    auto const failure = run([] { return std::make_unique<FixedJob>(true, true); });
    auto const unverified = run([] { return std::make_unique<FixedJob>(false); });
    for (auto const& [outcome, code, message, said] :
         {std::tuple{usage, 2, "no such key", "no such key"},
          std::tuple{failure, 1, "the disk is full (IoError)", "disk"},
          std::tuple{unverified, 3, "verification failed: 3 rows are in the wrong file", "3 rows are in the"}}) {
        ASSERT_EQ(outcome.out.find('\n'), outcome.out.size() - 1) << "one line: " << outcome.out;
        auto const json = nlohmann::json::parse(outcome.out);
        EXPECT_EQ(json.at("command"), "fixed");
        EXPECT_EQ(json.at("verified"), false);
        EXPECT_EQ(json.at("exit_code"), code);
        EXPECT_THAT(json.at("error").get<std::string>(), HasSubstr(message));
        EXPECT_THAT(outcome.err, HasSubstr(said)) << "stderr says it too";
    }
    EXPECT_EQ(nlohmann::json::parse(unverified.out).at("verification")[0], "3 rows are in the wrong file")
        << "the summary of a run that did not verify is all there";
}

TEST(RunJob, WithoutJsonAFailurePrintsNothingOnStdout) {
    auto const failure = run([] { return std::make_unique<FixedJob>(true, true); }, OutputFlags{false, false, {}});
    EXPECT_EQ(failure.code, ExitCode::failure);
    EXPECT_EQ(failure.out, "");
}

/// A stream buffer that takes every write and fails every flush, as a file
/// on a full disk does.
class FullDisk final : public std::stringbuf {
  protected:
    int sync() override { return -1; }
};

TEST(RunJob, ASummaryThatCannotBeWrittenIsAFailureButAFailedVerificationStaysOne) {
    Processes const alone(Options(), false, nullptr, nullptr);
    for (auto const verified : {true, false}) {
        FullDisk disk;
        std::ostream unwritable(&disk);
        std::ostringstream err;
        auto const code = run_job([verified] { return std::make_unique<FixedJob>(verified); }, "fixed",
                                  OutputFlags{true, false, {}}, alone, unwritable, err);
        EXPECT_EQ(code, verified ? ExitCode::failure : ExitCode::verification_failed);
        EXPECT_THAT(err.str(), HasSubstr("cannot write the summary to standard output"));
        EXPECT_EQ(err.str().find("verification failed") != std::string::npos, !verified) << err.str();
    }
}

TEST(RunJob, AFailedRunWritesItsTraceAndAUsageErrorLeavesTheFileAsItWas) {
    test::TemporaryDirectory directory;
    auto const trace = directory.path() / "trace.json";
    std::ofstream(trace) << "kept";
    auto const usage = run([]() -> std::unique_ptr<Job> { SPILLWAY_FAIL("no such key", InvalidArgument); },
                           OutputFlags{true, false, trace});
    EXPECT_EQ(usage.code, ExitCode::usage);
    std::string text;
    std::getline(std::ifstream(trace), text);
    EXPECT_EQ(text, "kept");

    auto const failure = run([] { return std::make_unique<FixedJob>(true, true); }, OutputFlags{true, false, trace});
    EXPECT_EQ(failure.code, ExitCode::failure);
    std::ifstream written(trace);
    auto const events = nlohmann::json::parse(written);
    EXPECT_TRUE(events.contains("traceEvents")) << events.dump().substr(0, 200);
}
