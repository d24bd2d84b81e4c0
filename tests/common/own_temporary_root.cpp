// Compiled into every test binary: gives the process a temporary directory
// of its own as $TMPDIR for the whole run, so that no test writes spill
// files to, or cleans stale spill directories from, the machine's shared
// temporary directory, and tests running at once never see each other's.

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace {

class OwnTemporaryRoot : public testing::Environment {
  public:
    void SetUp() override {
        auto pattern = (std::filesystem::temp_directory_path() / "spillway-tests-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << "cannot make a temporary directory " << pattern;
        path_ = pattern;
        ASSERT_EQ(::setenv("TMPDIR", path_.c_str(), 1), 0);
    }
    void TearDown() override {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }

  private:
    std::filesystem::path path_;
};

// gtest owns and deletes the environment.
testing::Environment* const registered = testing::AddGlobalTestEnvironment(new OwnTemporaryRoot);

}  // namespace
