#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <spillway/exec/thread_pool.hpp>
#include <spillway/io/parquet_row_groups.hpp>
#include <spillway/io/table_file.hpp>
#include <spillway/table/hash_partition.hpp>
#include <spillway/table/table_builder.hpp>
#include <spillway/table/table_checksum.hpp>

#include <common/temporary_directory.hpp>

#include "partition_check.hpp"
#include "partition_job.hpp"

using namespace spillway;
using namespace spillway::cli;

namespace {

std::string read_file(std::filesystem::path const& path) {
    std::ifstream file(path);
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

void write_file(std::filesystem::path const& path, std::string const& text) {
    std::ofstream(path, std::ios::trunc) << text;
}

/// A CSV of 200 rows repartitioned into 4 files by `PartitionJob`.
class PartitionCheckTest : public testing::Test {
  protected:
    void SetUp() override {
        std::ostringstream text;
        text << "id,name\n";
        for (int row = 0; row < 200; ++row) {
            text << row << ",name" << row * 7 << "\n";
        }
        write_file(directory_.path() / "input.csv", text.str());
        Options options;
        options.set("partitions", "4").set("threads", "2").set("memory_limit_host", "512MiB");
        PartitionArguments arguments;
        arguments.inputs = {directory_.path() / "input.csv"};
        arguments.keys = {"id"};
        arguments.output = directory_.path() / "out";
        PartitionJob job(std::move(arguments), options);
        std::ostringstream ignored;
        Progress quiet(Progress::Style::none, ignored);
        auto const summary = job.run(quiet);
        ASSERT_EQ(summary.verified, true);
        job.commit();
        input_ = CsvInput::open({directory_.path() / "input.csv"}, {"id"}, options);
        for (int partition = 0; partition < 4; ++partition) {
            files_.push_back(directory_.path() / "out" / ("part-0000" + std::to_string(partition) + ".csv"));
        }
    }

    PartitionCheck check() {
        std::ostringstream ignored;
        Progress quiet(Progress::Style::none, ignored);
        return check_partition_files(files_, input_, pool_, 2, {}, quiet);
    }

    test::TemporaryDirectory directory_;
    CsvInput input_;
    std::vector<std::filesystem::path> files_;
    exec::ThreadPool pool_{exec::ThreadPool::Config{2}};
};

}  // namespace

TEST_F(PartitionCheckTest, FindsEveryRowInItsPartitionAndTheInputsChecksum) {
    auto const result = check();
    EXPECT_EQ(result.misplaced_rows, 0u);
    EXPECT_EQ(result.first_misplaced, "");
    EXPECT_EQ(result.checksum.rows, 200u);
}

TEST_F(PartitionCheckTest, CatchesARowMovedToAnotherPartitionsFile) {
    auto const before = check().checksum;
    auto first = read_file(files_[0]);
    auto const header_end = first.find('\n') + 1;
    auto const row_end = first.find('\n', header_end) + 1;
    auto const row = first.substr(header_end, row_end - header_end);
    first.erase(header_end, row_end - header_end);
    write_file(files_[0], first);
    write_file(files_[1], read_file(files_[1]) + row);

    auto const result = check();
    EXPECT_EQ(result.misplaced_rows, 1u);
    EXPECT_NE(result.first_misplaced.find(files_[1].string() + " near line"), std::string::npos)
        << result.first_misplaced;
    EXPECT_NE(result.first_misplaced.find("hashes to partition 0, not 1"), std::string::npos) << result.first_misplaced;
    EXPECT_EQ(result.checksum, before) << "the rows are all there, only misplaced";
}

TEST_F(PartitionCheckTest, ChangesTheChecksumWhenARowIsChangedLostOrDuplicated) {
    auto const before = check().checksum;
    auto const original = read_file(files_[2]);
    auto const header_end = original.find('\n') + 1;
    auto const name = original.find("name", header_end);

    auto changed = original;
    changed[name] = 'N';
    write_file(files_[2], changed);
    auto after = check();
    EXPECT_EQ(after.misplaced_rows, 0u) << "the key did not change";
    EXPECT_EQ(after.checksum.rows, before.rows);
    EXPECT_NE(after.checksum, before);

    auto const row_end = original.find('\n', header_end) + 1;
    write_file(files_[2], original + original.substr(header_end, row_end - header_end));
    after = check();
    EXPECT_EQ(after.checksum.rows, before.rows + 1);
    EXPECT_NE(after.checksum, before);

    write_file(files_[2], original.substr(0, header_end) + original.substr(row_end));
    after = check();
    EXPECT_EQ(after.checksum.rows, before.rows - 1);
}

namespace {

/// 1000 rows of (id, name) hash-partitioned by id into 4 Parquet files of
/// row groups of 64 rows, so that each file has several row groups.
class ParquetPartitionCheckTest : public testing::Test {
  protected:
    static constexpr std::uint32_t partitions = 4;

    void SetUp() override {
        table::TableBuilder builder(schema_);
        for (std::int64_t row = 0; row < 1000; ++row) {
            builder.column(0).append(row);
            builder.column(1).append("name" + std::to_string(row * 7));
        }
        input_ = builder.finish();
        auto pieces = table::hash_partition(input_, keys_, partitions);
        for (std::uint32_t partition = 0; partition < partitions; ++partition) {
            files_.push_back(
                {partition, directory_.path() / ("part-0000" + std::to_string(partition) + ".parquet"), 0});
            write(partition, pieces[partition]);
        }
    }

    void write(std::uint32_t partition, table::Table const& rows, table::Table const* extra = nullptr) {
        io::WriteOptions options;
        options.row_group_rows = 64;
        auto file = io::create_table_file(files_[partition].path, io::FileFormat::parquet, schema_, options);
        file->write(rows);
        if (extra != nullptr) {
            file->write(*extra);
        }
        file->close();
    }

    PartitionCheck check() {
        std::ostringstream ignored;
        Progress quiet(Progress::Style::none, ignored);
        return check_partition_tables(files_, partitions, io::FileFormat::parquet, {}, schema_, keys_, pool_, 3, {},
                                      quiet);
    }

    test::TemporaryDirectory directory_;
    table::Schema schema_{{{"id", table::DataType::int64}, {"name", table::DataType::string}}};
    std::vector<std::size_t> keys_{0};
    table::Table input_;
    std::vector<PartitionFile> files_;
    exec::ThreadPool pool_{exec::ThreadPool::Config{2}};
};

}  // namespace

TEST_F(ParquetPartitionCheckTest, ReadsEveryRowGroupOfEveryFile) {
    ASSERT_GT(io::ParquetRowGroups(files_[0].path).size(), 2u);
    auto const result = check();
    EXPECT_EQ(result.misplaced_rows, 0u);
    EXPECT_EQ(result.checksum, table::TableChecksum::of(input_));
}

TEST_F(ParquetPartitionCheckTest, CatchesAStrayRowAndCountsItInTheChecksum) {
    auto const pieces = table::hash_partition(input_, keys_, partitions);
    auto const stray = pieces[0].slice(0, 1);
    write(1, pieces[1], &stray);

    auto const result = check();
    EXPECT_EQ(result.misplaced_rows, 1u);
    EXPECT_NE(result.first_misplaced.find(files_[1].path.string()), std::string::npos) << result.first_misplaced;
    EXPECT_NE(result.first_misplaced.find("hashes to partition 0, not 1"), std::string::npos)
        << result.first_misplaced;
    EXPECT_EQ(result.checksum.rows, 1001u);
    EXPECT_NE(result.checksum, table::TableChecksum::of(input_));
}
