// `spillway tpch` and `spillway generate` end to end: real
// processes, real files. (tests/tpch checks the answers against DuckDB.)
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <common/temporary_directory.hpp>

#include "cli_process.hpp"

using spillway::test::run_spillway;
using testing::HasSubstr;

namespace {

/// The JSON object that a failed `--json` run printed as all of its stdout.
nlohmann::json failure_of(spillway::test::ProcessResult const& result, int exit_code) {
    EXPECT_EQ(result.exit_code, exit_code) << result.err;
    auto const json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json.at("exit_code"), exit_code);
    return json;
}

/// Writes the eight TPC-H tables at scale 0.001 as Parquet into the new directory `data`.
testing::AssertionResult generate_parquet(std::filesystem::path const& data) {
    auto const generated = run_spillway({"generate", "--tables", "all", "--scale", "0.001", "--output-format",
                                         "parquet", "-o", data.string(), "--quiet"});
    return generated.exit_code == 0 ? testing::AssertionSuccess()
                                    : testing::AssertionFailure() << "generate failed: " << generated.err;
}

/// Runs the Python `script`, with pyarrow imported as `pa`, pyarrow.parquet as
/// `pq`, and `path` the file's path: to write Parquet files spillway would not.
testing::AssertionResult run_pyarrow(std::string const& script, std::filesystem::path const& file) {
    auto const ran = spillway::test::run_process(
        {SPILLWAY_PYTHON, "-c", "import pyarrow as pa, pyarrow.parquet as pq, sys; path = sys.argv[1]; " + script,
         file.string()},
        {});
    return ran.exit_code == 0 ? testing::AssertionSuccess()
                              : testing::AssertionFailure() << "the script failed: " << ran.err;
}

}  // namespace

TEST(CliTpch, PrintsTheAnswerAsColumnsAndRowsOfJsonValuesAndASummary) {
    auto const result = run_spillway({"tpch", "--query", "3", "--scale", "0.01", "--json", "--quiet"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    auto const summary = result.summary();
    EXPECT_EQ(summary.at("command"), "tpch");
    EXPECT_TRUE(summary.at("verified").is_null()) << "tpch has nothing to verify";
    EXPECT_EQ(summary.at("columns"), (nlohmann::json{"l_orderkey", "revenue", "o_orderdate", "o_shippriority"}));
    auto const& rows = summary.at("rows");
    ASSERT_EQ(rows.size(), 10U);
    for (auto const& row : rows) {
        EXPECT_TRUE(row.at(0).is_number_integer());
        EXPECT_TRUE(row.at(1).is_number_float());
        EXPECT_THAT(row.at(2).get<std::string>(), testing::MatchesRegex("199[2-5]-[0-9][0-9]-[0-9][0-9]"));
        EXPECT_EQ(row.at(3), 0);
    }
    EXPECT_GT(summary.at("bytes").get<std::uint64_t>(), 0U) << "the bytes of the tables read";
    EXPECT_GT(summary.at("rows_read").get<std::uint64_t>(), 60000U) << "their rows: lineitem's alone are 60,000";
    EXPECT_EQ(summary.at("settings").at("query"), 3);

    auto const text = run_spillway({"tpch", "--query", "1", "--scale", "0.01"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_THAT(text.out, HasSubstr("l_returnflag | l_linestatus | sum_qty"));
    EXPECT_THAT(text.out, HasSubstr("\nA | F | "));
    EXPECT_THAT(text.out, HasSubstr("spillway tpch\n"));

    auto const quiet = run_spillway({"tpch", "--query", "1", "--scale", "0.01", "--quiet"});
    ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
    EXPECT_THAT(quiet.out, testing::StartsWith("l_returnflag | l_linestatus | sum_qty")) << "the answer stays";
    EXPECT_THAT(quiet.out, testing::Not(HasSubstr("spillway tpch"))) << "the summary goes";
}

TEST(CliTpch, AnAnswerWithoutRowsStillNamesItsColumns) {
    // So few rows that no French or German line item is shipped between them.
    auto const result = run_spillway({"tpch", "--query", "7", "--scale", "0.001", "--ranks", "2", "--json", "--quiet"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    auto const summary = result.summary();
    EXPECT_EQ(summary.at("rows"), nlohmann::json::array());
    EXPECT_EQ(summary.at("columns"), (nlohmann::json{"supp_nation", "cust_nation", "l_year", "revenue"}));
}

TEST(CliTpch, TheBytesSentCountAllGathersAsWellAsShuffles) {
    // Q1 moves rows only by all-gathering each rank's partial sums.
    auto const result = run_spillway({"tpch", "--query", "1", "--scale", "0.001", "--ranks", "2", "--json", "--quiet"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_GT(result.summary().at("sent_bytes").get<std::uint64_t>(), 0U);
}

TEST(CliTpch, AQueryThatIsNotImplementedOrAMissingDataFileIsAUsageError) {
    auto const unknown = failure_of(run_spillway({"tpch", "--query", "2", "--json", "--quiet"}), 2);
    EXPECT_THAT(unknown.at("error").get<std::string>(), HasSubstr("the queries are 1, 3, 4, 5, 7, 9, 18, 21"));
    spillway::test::TemporaryDirectory empty;
    auto const missing =
        failure_of(run_spillway({"tpch", "--query", "1", "--data", empty.path().string(), "--json", "--quiet"}), 2);
    EXPECT_THAT(missing.at("error").get<std::string>(), HasSubstr("part.parquet"));
    EXPECT_THAT(missing.at("error").get<std::string>(), HasSubstr("--output-format parquet"));
    // An unset shell variable (`--data "$DIR"`) is not taken as no --data.
    auto const unset = run_spillway({"tpch", "--query", "1", "--data", ""});
    EXPECT_EQ(unset.exit_code, 2);
    EXPECT_THAT(unset.err, HasSubstr("--data: the path is empty"));
    auto const no_query = run_spillway({"tpch", "--scale", "0.01"});
    EXPECT_EQ(no_query.exit_code, 2);
    EXPECT_THAT(no_query.err, HasSubstr("--query"));
}

TEST(CliTpch, ALimitBelowWhatTheQueryWorksInFailsWithOutOfMemoryNamingTheLimitNotTheKernelsOomKiller) {
    // A generated chunk of line items is about 250 KiB here; 256 KiB cannot
    // hold one and what the query holds beside it.
    auto const result = run_spillway({"tpch", "--query", "9", "--scale", "0.01", "--memory-limit", "256KiB", "--json",
                                      "--quiet"},
                                     {"SPILLWAY_MEMORY_RESERVE_TIMEOUT=2s"});
    auto const json = failure_of(result, 1);
    auto const error = json.at("error").get<std::string>();
    EXPECT_THAT(error, HasSubstr("--memory-limit"));
    EXPECT_THAT(error, testing::StartsWith("cannot reserve"));
    EXPECT_THAT(error, testing::EndsWith("(OutOfMemory)"));
    EXPECT_THAT(result.err, HasSubstr("(OutOfMemory)\n"));
}

TEST(CliTpch, AWaitForMemoryThatNothingFreesEndsAfterTheReserveTimeoutNamingItsFlag) {
    // 2 MiB holds each request the query makes, but not all it holds at once.
    auto const result = run_spillway({"tpch", "--query", "9", "--scale", "0.1", "--memory-limit", "2MiB",
                                      "--reserve-timeout", "1s", "--json", "--quiet"});
    auto const json = failure_of(result, 1);
    auto const error = json.at("error").get<std::string>();
    EXPECT_THAT(error, HasSubstr("nothing was freed or spilled for 1 s"));
    EXPECT_THAT(error, HasSubstr("raise --reserve-timeout"));
    EXPECT_THAT(error, testing::Not(HasSubstr("memory_reserve_timeout")));
}

TEST(CliGenerate, TablesAllWritesTheEightTablesIntoANewDirectoryInTheChosenFormat) {
    spillway::test::TemporaryDirectory directory;
    auto const tbl = directory.path() / "tbl";
    auto const result = run_spillway({"generate", "--tables", "all", "--scale", "0.001", "-o", tbl.string(), "--json",
                                      "--quiet"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    for (auto const* table : {"part", "supplier", "partsupp", "customer", "orders", "lineitem", "nation", "region"}) {
        EXPECT_TRUE(std::filesystem::is_regular_file(tbl / (std::string(table) + ".tbl"))) << table;
    }
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(tbl), {}), 8);
    std::ifstream nation(tbl / "nation.tbl");
    std::string first;
    std::getline(nation, first);
    EXPECT_THAT(first, testing::StartsWith("0|ALGERIA|0|"));
    EXPECT_EQ(first.back(), '|');

    auto const again = run_spillway({"generate", "--tables", "all", "--scale", "0.001", "-o", tbl.string(), "--quiet"});
    EXPECT_EQ(again.exit_code, 2) << "the directory is not empty";

    auto const parquet = directory.path() / "parquet";
    auto const two = run_spillway({"generate", "--tables", "nation,region", "--output-format", "parquet", "-o",
                                   parquet.string(), "--quiet"});
    ASSERT_EQ(two.exit_code, 0) << two.err;
    EXPECT_TRUE(std::filesystem::is_regular_file(parquet / "nation.parquet"));
    EXPECT_TRUE(std::filesystem::is_regular_file(parquet / "region.parquet"));
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(parquet), {}), 2);
}

TEST(CliGenerate, UnknownRepeatedOrBothKindsOfTablesAreUsageErrorsThatWriteNothing) {
    spillway::test::TemporaryDirectory directory;
    auto const output = directory.path() / "out";
    EXPECT_EQ(run_spillway({"generate", "--tables", "parts", "-o", output.string()}).exit_code, 2);
    EXPECT_EQ(run_spillway({"generate", "--tables", "part,part", "-o", output.string()}).exit_code, 2);
    EXPECT_EQ(run_spillway({"generate", "--table", "part", "--tables", "all", "-o", output.string()}).exit_code, 2);
    EXPECT_EQ(run_spillway({"generate", "--table", "lines", "-o", output.string()}).exit_code, 2);
    for (auto const* tables : {"orders,", ",nation", ",", "orders,,nation"}) {
        auto const result = run_spillway({"generate", "--tables", tables, "-o", output.string()});
        EXPECT_EQ(result.exit_code, 2) << tables;
        EXPECT_THAT(result.err, testing::HasSubstr("--tables: '" + std::string(tables) + "' has an empty item"));
    }
    EXPECT_FALSE(std::filesystem::exists(output));
}

TEST(CliTpch, DataFilesWithoutAColumnOfTheTableOrWithAnotherTypeAreAUsageErrorNamingThem) {
    spillway::test::TemporaryDirectory directory;
    auto const data = directory.path() / "data";
    ASSERT_TRUE(generate_parquet(data));
    auto const nation = data / "nation.parquet";
    // region's file in nation's place: no n_nationkey.
    std::filesystem::copy_file(data / "region.parquet", nation, std::filesystem::copy_options::overwrite_existing);
    std::vector<std::string> const query{"tpch", "--query", "7", "--data", data.string(), "--json", "--quiet"};
    auto const missing = failure_of(run_spillway(query), 2);
    EXPECT_THAT(missing.at("error").get<std::string>(), HasSubstr("nation.parquet has no column n_nationkey"));
    // n_nationkey as strings.
    ASSERT_TRUE(run_pyarrow("pq.write_table(pa.table({'n_nationkey': ['0'], 'n_name': ['ALGERIA'], "
                            "'n_regionkey': [0], 'n_comment': ['x']}), path)",
                            nation));
    auto const typed = failure_of(run_spillway(query), 2);
    EXPECT_THAT(typed.at("error").get<std::string>(),
                HasSubstr("nation.parquet has n_nationkey of type string; TPC-H nation needs n_nationkey of type "
                          "int64"));
}

namespace {

/// Whether two `--json` answers hold the same rows: equal strings and
/// integers, and floating-point numbers within a relative 1e-9 (sums taken
/// in another order differ in their last digits).
testing::AssertionResult same_answer(nlohmann::json const& left, nlohmann::json const& right) {
    if (left.at("columns") != right.at("columns") || left.at("rows").size() != right.at("rows").size()) {
        return testing::AssertionFailure() << left.dump() << "\nagainst\n" << right.dump();
    }
    for (std::size_t row = 0; row < left.at("rows").size(); ++row) {
        auto const& a = left.at("rows")[row];
        auto const& b = right.at("rows")[row];
        for (std::size_t column = 0; column < a.size(); ++column) {
            bool const equal = a[column].is_number_float() && b[column].is_number()
                                 ? std::abs(a[column].get<double>() - b[column].get<double>())
                                       <= 1e-9 * std::max(1.0, std::abs(a[column].get<double>()))
                                 : a[column] == b[column];
            if (!equal) {
                return testing::AssertionFailure() << "row " << row << ": " << a.dump() << " against " << b.dump();
            }
        }
    }
    return testing::AssertionSuccess();
}

}  // namespace

TEST(CliTpch, TheTblFilesOfGenerateAnswerAsTheTablesGeneratedInMemoryDo) {
    spillway::test::TemporaryDirectory directory;
    auto const data = directory.path() / "tbl";
    ASSERT_EQ(run_spillway({"generate", "--tables", "all", "--scale", "0.01", "-o", data.string(), "--quiet"})
                  .exit_code,
              0);
    for (auto const* query : {"1", "9", "21"}) {
        auto const from_files =
            run_spillway({"tpch", "--query", query, "--data", data.string(), "--ranks", "2", "--json", "--quiet"});
        auto const generated = run_spillway({"tpch", "--query", query, "--scale", "0.01", "--json", "--quiet"});
        ASSERT_EQ(from_files.exit_code, 0) << from_files.err;
        ASSERT_EQ(generated.exit_code, 0) << generated.err;
        EXPECT_TRUE(same_answer(from_files.summary(), generated.summary())) << "query " << query;
        EXPECT_EQ(from_files.summary().at("settings").at("data"), data.string());
    }
    // A line with a field too few stops the query, naming the file and line.
    {
        std::ofstream nation(data / "nation.tbl", std::ios::app);
        nation << "25|ATLANTIS|1|\n";
    }
    auto const failed =
        failure_of(run_spillway({"tpch", "--query", "7", "--data", data.string(), "--json", "--quiet"}), 1);
    EXPECT_THAT(failed.at("error").get<std::string>(), HasSubstr("nation.tbl:26:"));
}

TEST(CliTpch, DataFilesWithNullsFailTheQueryNamingTheFileAndColumn) {
    spillway::test::TemporaryDirectory directory;
    auto const data = directory.path() / "data";
    ASSERT_TRUE(generate_parquet(data));
    auto const nation = data / "nation.parquet";
    ASSERT_TRUE(run_pyarrow("t = pq.read_table(path); "
                            "names = pa.array([None] + t.column('n_name').to_pylist()[1:], pa.string()); "
                            "pq.write_table(t.set_column(1, 'n_name', names), path)",
                            nation));
    auto const failed =
        failure_of(run_spillway({"tpch", "--query", "7", "--data", data.string(), "--json", "--quiet"}), 1);
    EXPECT_THAT(failed.at("error").get<std::string>(),
                HasSubstr("nation.parquet has nulls in n_name (row group 0); TPC-H's columns are NOT NULL"));
}

TEST(CliGenerate, AnOutputThatIsNoRegularFileOrNamesACompressedFileIsAUsageErrorThatWritesNothing) {
    spillway::test::TemporaryDirectory directory;
    auto const pipe = directory.path() / "rows.tbl";
    ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
    auto const to_pipe = run_spillway({"generate", "--table", "region", "--scale", "0.001", "-o", pipe.string()});
    EXPECT_EQ(to_pipe.exit_code, 2);
    EXPECT_THAT(to_pipe.err, HasSubstr("is not a regular file"));
    EXPECT_TRUE(std::filesystem::is_fifo(pipe)) << "left as it was";
    auto const to_stdout = run_spillway({"generate", "--table", "region", "--scale", "0.001", "-o", "-"});
    EXPECT_EQ(to_stdout.exit_code, 2);
    EXPECT_THAT(to_stdout.err, HasSubstr("not to standard output"));
    auto const gzip = directory.path() / "rows.csv.gz";
    auto const compressed = run_spillway({"generate", "--table", "region", "--scale", "0.001", "-o", gzip.string()});
    EXPECT_EQ(compressed.exit_code, 2);
    EXPECT_THAT(compressed.err, HasSubstr("names a compressed file"));
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(directory.path()), {}), 1) << "only the pipe";
}

TEST(CliGenerate, NamesOfTablesAndTblFilesAreMatchedInAnyCase) {
    spillway::test::TemporaryDirectory directory;
    auto const file = directory.path() / "REGION.TBL";
    auto const result =
        run_spillway({"generate", "--table", "REGION", "--scale", "0.001", "-o", file.string(), "--quiet"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    std::ifstream rows(file);
    std::string first;
    std::getline(rows, first);
    EXPECT_THAT(first, testing::StartsWith("0|AFRICA|")) << "TPC-H's format: no header, '|' after every field";
    EXPECT_EQ(first.back(), '|');
}

#ifdef SPILLWAY_MPIEXEC
TEST(CliTpch, OverMpiTheSummaryAddsUpEveryRank) {
    std::vector<std::string> const query{"tpch", "--query", "3", "--scale", "0.01", "--json", "--quiet"};
    auto in_process = query;
    in_process.insert(in_process.end(), {"--ranks", "2"});
    auto const local = run_spillway(in_process);
    ASSERT_EQ(local.exit_code, 0) << local.err;
    std::vector<std::string> arguments{SPILLWAY_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", "2",
                                       SPILLWAY_CLI_PATH};
    arguments.insert(arguments.end(), query.begin(), query.end());
    arguments.insert(arguments.end(), {"--comm", "mpi"});
    auto const mpi = spillway::test::run_process(
        arguments, {"OMPI_MCA_btl=self,vader", "OMPI_MCA_btl_vader_single_copy_mechanism=none",
                    "LSAN_OPTIONS=suppressions=" SPILLWAY_LSAN_SUPPRESSIONS ":fast_unwind_on_malloc=0"});
    ASSERT_EQ(mpi.exit_code, 0) << mpi.err;
    auto const over_mpi = mpi.summary();
    auto const in_one = local.summary();
    EXPECT_EQ(over_mpi.at("rows"), in_one.at("rows")) << "the same answer";
    EXPECT_EQ(over_mpi.at("rows_read"), in_one.at("rows_read")) << "both ranks' reads";
    EXPECT_EQ(over_mpi.at("bytes"), in_one.at("bytes"));
    EXPECT_EQ(over_mpi.at("peak_memory").at("HOST").at("ranks").size(), 2U);
    EXPECT_GT(over_mpi.at("sent_bytes").get<std::uint64_t>(), 0U);
}
#endif
