// chunk_numbers, the chunks one rank generates, and chunk_count, how many.
#include <chunk_numbers.hpp>

#include <cstddef>
#include <vector>

#include <gtest/gtest.h>

using spillway::cli::chunk_count;
using spillway::cli::chunk_numbers;

namespace {

std::vector<std::size_t> all_of(std::size_t first, std::size_t stride, std::size_t end) {
    std::vector<std::size_t> numbers;
    auto next = chunk_numbers(first, stride, end);
    while (auto number = next()) {
        numbers.push_back(*number);
    }
    return numbers;
}

}  // namespace

TEST(ChunkNumbers, YieldsEveryStrideThNumberFromFirstBelowEnd) {
    EXPECT_EQ(all_of(1, 3, 10), (std::vector<std::size_t>{1, 4, 7}));
    EXPECT_EQ(all_of(0, 1, 3), (std::vector<std::size_t>{0, 1, 2}));
    EXPECT_TRUE(all_of(5, 4, 5).empty());
    EXPECT_TRUE(all_of(6, 4, 5).empty()) << "a rank past the last chunk makes none";
}

TEST(ChunkNumbers, ChunkCountIsHowManyChunkNumbersYields) {
    for (std::size_t end = 0; end < 20; ++end) {
        for (std::size_t stride = 1; stride < 6; ++stride) {
            for (std::size_t first = 0; first < 8; ++first) {
                EXPECT_EQ(chunk_count(first, stride, end), all_of(first, stride, end).size())
                    << "first " << first << ", stride " << stride << ", end " << end;
            }
        }
    }
}
