// `spillway partition` on users' CSV files, end to end: keys that line up
// across tables, malformed rows, headers in other orders, declared types.

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <common/temporary_directory.hpp>

#include "cli_process.hpp"

using spillway::test::run_spillway;
using testing::HasSubstr;

namespace {

class CliPartitionInput : public testing::Test {
  protected:
    /// Writes `text` to `name` in the test's directory; returns its path.
    std::filesystem::path write(std::string const& name, std::string const& text) {
        auto const path = directory_.path() / name;
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }

    /// Runs `spillway partition` of `inputs` by `key` into the directory
    /// `output` with `more` flags, printing JSON.
    spillway::test::ProcessResult partition(std::vector<std::filesystem::path> const& inputs, std::string const& key,
                                            std::string const& output, std::vector<std::string> more = {}) {
        std::string input_list;
        for (auto const& input : inputs) {
            if (!input_list.empty()) {
                input_list += ',';
            }
            input_list += input.string();
        }
        std::vector<std::string> arguments{"partition", "-i", input_list, "-k", key, "-o",
                                           (directory_.path() / output).string(), "--json", "--quiet",
                                           "--memory-limit", "256MiB"};
        arguments.insert(arguments.end(), more.begin(), more.end());
        return run_spillway(arguments);
    }

    /// The text of partition file `partition` of `output`.
    std::string part(std::string const& output, int partition) {
        std::ostringstream name;
        name << "part-" << std::setw(5) << std::setfill('0') << partition << ".csv";
        std::ifstream file(directory_.path() / output / name.str(), std::ios::binary);
        return {std::istreambuf_iterator<char>(file), {}};
    }

    /// For each value of the first field of the rows (after the header) of
    /// `output`'s `partitions` files, the partition holding it.
    std::map<std::string, int> placement(std::string const& output, int partitions) {
        std::map<std::string, int> where;
        for (int partition = 0; partition < partitions; ++partition) {
            std::istringstream lines(part(output, partition));
            std::string line;
            std::getline(lines, line);  // the header
            while (std::getline(lines, line)) {
                where[line.substr(0, line.find(','))] = partition;
            }
        }
        return where;
    }

    spillway::test::TemporaryDirectory directory_;
};

}  // namespace

TEST_F(CliPartitionInput, EqualKeysOfTwoTablesLandInTheSamePartitionWhateverTheInferredTypes) {
    std::string users = "user_id,name\n";
    std::string events = "user_id,event\nunknown,signup\n";  // makes events.user_id text
    for (int user = 1; user <= 200; ++user) {
        users += std::to_string(user) + ",user" + std::to_string(user) + "\n";
        events += std::to_string(user) + ",login\n";
    }
    auto const users_csv = write("users.csv", users);
    auto const events_csv = write("events.csv", events);
    auto const users_result = partition({users_csv}, "user_id", "users", {"--partitions", "4"});
    auto const events_result = partition({events_csv}, "user_id", "events", {"--partitions", "4"});
    ASSERT_EQ(users_result.exit_code, 0) << users_result.err;
    ASSERT_EQ(events_result.exit_code, 0) << events_result.err;
    auto const user_parts = placement("users", 4);
    auto const event_parts = placement("events", 4);
    ASSERT_EQ(user_parts.size(), 200u);
    std::set<int> used;
    for (auto const& [user, partition] : user_parts) {
        ASSERT_TRUE(event_parts.contains(user)) << user;
        EXPECT_EQ(event_parts.at(user), partition) << "user " << user;
        used.insert(partition);
    }
    EXPECT_EQ(used.size(), 4u) << "the keys spread over every partition";

    // A declared type places the rows exactly as the inferred one.
    auto const declared = partition({users_csv}, "user_id", "declared", {"--partitions", "4", "--schema",
                                                                         "user_id:string"});
    ASSERT_EQ(declared.exit_code, 0) << declared.err;
    EXPECT_EQ(placement("declared", 4), user_parts);
}

TEST_F(CliPartitionInput, ARowWithTheWrongFieldCountAnywhereFailsNamingFileLineAndCounts) {
    std::string text = "a,b,c\n";
    for (int row = 0; row < 2000; ++row) {
        text += std::to_string(row) + ",x,y\n";
    }
    text += "2000,x\n";
    auto const input = write("ragged.csv", text);
    for (std::string const key : {"a", "c"}) {
        auto const result = partition({input}, key, std::string("out-").append(key));
        EXPECT_EQ(result.exit_code, 1) << key;
        EXPECT_THAT(result.err, HasSubstr(input.string() + ":2002: expected 3 fields, found 2")) << key;
    }
    auto const early = write("early.csv", "a,b,c\n1,x,y\n2,x,y,z\n");
    auto const result = partition({early}, "a", "out-early");
    EXPECT_EQ(result.exit_code, 1) << "within the rows read to infer types too";
    EXPECT_THAT(result.err, HasSubstr(early.string() + ":3: expected 3 fields, found 4"));
}

TEST_F(CliPartitionInput, SkippingBadRowsCountsThemInTheSummaryAndVerifiesTheRest) {
    auto const input = write("bad.csv", "a,b\n1,x\n2,x,extra\n3\n4,y\n");
    auto const result = partition({input}, "a", "out", {"--bad-rows", "skip", "--partitions", "2"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    auto const summary = result.summary();
    EXPECT_EQ(summary.at("verified"), true);
    EXPECT_EQ(summary.at("rows"), 2);
    EXPECT_EQ(summary.at("skipped_rows"), 2);
    EXPECT_EQ(placement("out", 2).size(), 2u);
    EXPECT_TRUE(placement("out", 2).contains("1"));
    EXPECT_TRUE(placement("out", 2).contains("4"));

    auto const text = run_spillway({"partition", "-i", input.string(), "-k", "a", "-o",
                                    (directory_.path() / "text").string(), "--bad-rows", "skip"});
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_THAT(text.out, HasSubstr("skipped      2 rows with the wrong number of fields"));
    auto const strict = partition({input}, "a", "strict");
    EXPECT_EQ(strict.exit_code, 1) << "rows are not skipped unless asked";
    auto const good = partition({write("good.csv", "a,b\n1,x\n")}, "a", "good");
    ASSERT_EQ(good.exit_code, 0) << good.err;
    EXPECT_FALSE(good.summary().contains("skipped_rows"));
}

TEST_F(CliPartitionInput, FilesWithColumnsInAnotherOrderAreWrittenInTheFirstFilesOrder) {
    auto const first = write("f1.csv", "\"a\",b\r\n1,x\r\n");
    auto const second = write("f2.csv", "b,a\n\"y,z\",2\n");
    auto const result = partition({first, second}, "a", "out", {"--partitions", "1"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.summary().at("verified"), true);
    EXPECT_EQ(part("out", 0), "\"a\",b\r\n1,x\r\n2,\"y,z\"\n") << "the first file's header line, unchanged";

    auto const other = write("f3.csv", "a,c\n1,x\n");
    auto const mismatch = partition({first, other}, "a", "mismatch");
    EXPECT_EQ(mismatch.exit_code, 2);
    EXPECT_THAT(mismatch.err, HasSubstr(other.string() + "' has no column 'b'"));
}

TEST_F(CliPartitionInput, AByteOrderMarkIsNotPartOfTheFirstColumnsName) {
    auto const input = write("bom.csv", "\xef\xbb\xbfid,name\n1,x\n");
    auto const result = partition({input}, "id", "out", {"--partitions", "1"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(part("out", 0), "id,name\n1,x\n");
}

TEST_F(CliPartitionInput, ATypeChangePastTheInferredRowsNamesTheFlagsThatFixIt) {
    std::string text = "id,v\n";
    for (int row = 0; row < 1500; ++row) {
        text += std::to_string(row) + ",x\n";
    }
    text += "abc,x\n";
    auto const input = write("late.csv", text);
    auto const result = partition({input}, "id", "out");
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_THAT(result.err, HasSubstr("late.csv:1502: column 'id': cannot parse 'abc' as int64"));
    EXPECT_THAT(result.err, HasSubstr("--schema id:string"));
    EXPECT_THAT(result.err, HasSubstr("--infer-rows"));
    EXPECT_THAT(result.err, testing::Not(HasSubstr(".cpp:"))) << "no source location for users";

    auto const fixed = partition({input}, "id", "fixed", {"--infer-rows", "2000"});
    EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
}

TEST_F(CliPartitionInput, AKeySpelledOtherThanExactlyPastTheInferredRowsStopsTheRun) {
    // In a table whose first rows hold it, 042 makes the column strings and
    // goes where the text goes; past them it must not go where 42 does.
    std::string text = "k,g\n";
    for (int row = 1; row <= 1000; ++row) {
        text += std::to_string(row) + ",x\n";
    }
    for (auto const* late : {"042", "-0"}) {
        auto const input = write(std::string("late") + late + ".csv", text + late + ",B\n");
        for (auto const* format : {"csv", "parquet"}) {
            auto const result = partition({input}, "k", std::string("out") + late + format,
                                          {"--output-format", format});
            EXPECT_EQ(result.exit_code, 1) << late << " " << format;
            EXPECT_THAT(result.err, HasSubstr(":1002: column 'k': cannot parse '" + std::string(late) + "' as int64"));
            EXPECT_THAT(result.err, HasSubstr("--schema k:string"));
        }
    }
    auto const declared = partition({write("declared.csv", text + "042,B\n")}, "k", "declared",
                                    {"--schema", "k:int64"});
    EXPECT_EQ(declared.exit_code, 0) << "a declared int64 reads 042 as 42: " << declared.err;
}

TEST_F(CliPartitionInput, ARowLongerThanTheBlockSizeNamesTheFlagThatRaisesIt) {
    auto const input = write("long.csv", "a,b\n1," + std::string(200, 'x') + "\n");
    auto const result = partition({input}, "a", "out", {"--block-size", "64"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_THAT(result.err, HasSubstr("raise --block-size for longer rows"));
    EXPECT_THAT(result.err, testing::Not(HasSubstr("csv_chunk_bytes")));
    EXPECT_THAT(result.summary().at("error").get<std::string>(), HasSubstr("--block-size"));
}

TEST_F(CliPartitionInput, EmptyAndCompressedInputsAreNamedForWhatTheyAre) {
    auto const empty = write("empty.csv", "");
    auto const empty_result = partition({empty}, "a", "out-empty");
    EXPECT_EQ(empty_result.exit_code, 2);
    EXPECT_THAT(empty_result.err, HasSubstr("empty.csv' is empty"));
    auto const gzip = write("rows.csv.gz", std::string("\x1f\x8b\x08\x00\x00\x00", 6));
    auto const gzip_result = partition({gzip}, "a", "out-gzip");
    EXPECT_EQ(gzip_result.exit_code, 2);
    EXPECT_THAT(gzip_result.err, HasSubstr("is gzip-compressed; decompress it first"));
}

TEST_F(CliPartitionInput, EmptyFilesWithoutAHeaderAreFilesOfNoRows) {
    // `partition` writes an empty partition of headerless `.tbl` rows as an
    // empty file: its output reads back as input.
    auto const rows = write("x.tbl", "1|a|\n2|b|\n");
    auto const first = partition({rows}, "0", "p1", {"--partitions", "4"});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    std::vector<std::filesystem::path> parts;
    std::size_t empty_parts = 0;
    for (int partition = 0; partition < 4; ++partition) {
        parts.push_back(directory_.path() / "p1" / ("part-0000" + std::to_string(partition) + ".tbl"));
        empty_parts += std::filesystem::file_size(parts.back()) == 0 ? 1 : 0;
    }
    ASSERT_GT(empty_parts, 0U) << "two rows in four partitions leave one empty";
    for (auto const* ranks : {"1", "2"}) {
        auto const again = partition(parts, "0", std::string("p2-") + ranks, {"--partitions", "4", "--ranks", ranks});
        ASSERT_EQ(again.exit_code, 0) << again.err;
        EXPECT_EQ(again.summary().at("rows"), 2);
        EXPECT_EQ(again.summary().at("verified"), true);
    }
    auto const none = partition({write("a.tbl", ""), write("b.tbl", "")}, "0", "p3");
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_THAT(none.err, HasSubstr("every input file is empty"));
}
