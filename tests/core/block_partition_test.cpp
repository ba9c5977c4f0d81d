// The block partition (thesis 4.5): contiguous rows covering all of dsize,
// the first dsize % nprocs ranks holding one row more.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "flexmpi/flexmpi.hpp"

namespace flexmpi {
namespace {

using ::testing::HasSubstr;

TEST(BlockPartition, CoversEveryRowOnceAndFirstRanksGetTheRemainder) {
  for (int nprocs = 1; nprocs <= 9; ++nprocs) {
    for (int dsize = 0; dsize <= 50; ++dsize) {
      SCOPED_TRACE("nprocs=" + std::to_string(nprocs) + " dsize=" + std::to_string(dsize));
      int next_row = 0;
      for (int rank = 0; rank < nprocs; ++rank) {
        const Partition p = block_partition(rank, nprocs, dsize);
        EXPECT_EQ(p.displ, next_row) << "rank " << rank;
        const int expected = dsize / nprocs + (rank < dsize % nprocs ? 1 : 0);
        EXPECT_EQ(p.count, expected) << "rank " << rank;
        next_row += p.count;
      }
      EXPECT_EQ(next_row, dsize);
    }
  }
}

TEST(BlockPartition, HandComputedExamples) {
  // 10 rows over 4: 3 3 2 2
  EXPECT_EQ(block_partition(0, 4, 10).count, 3);
  EXPECT_EQ(block_partition(1, 4, 10).displ, 3);
  EXPECT_EQ(block_partition(2, 4, 10).count, 2);
  EXPECT_EQ(block_partition(2, 4, 10).displ, 6);
  EXPECT_EQ(block_partition(3, 4, 10).displ, 8);
  // fewer rows than processes: the last ones get nothing
  EXPECT_EQ(block_partition(1, 3, 2).count, 1);
  EXPECT_EQ(block_partition(2, 3, 2).count, 0);
  EXPECT_EQ(block_partition(2, 3, 2).displ, 2);
}

TEST(BlockPartition, LargeSizeDoesNotOverflow) {
  const int dsize = 2'000'000'000;
  const Partition last = block_partition(6, 7, dsize);
  EXPECT_EQ(last.displ + last.count, dsize);
}

void expect_invalid(int rank, int nprocs, int dsize, const std::string& argument) {
  SCOPED_TRACE(argument);
  try {
    block_partition(rank, nprocs, dsize);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr(argument));
  }
}

TEST(BlockPartition, BadArgumentsThrowInvalidArgumentNamingThem) {
  expect_invalid(0, 0, 10, "nprocs=0");
  expect_invalid(0, -2, 10, "nprocs=-2");
  expect_invalid(-1, 4, 10, "rank=-1");
  expect_invalid(4, 4, 10, "rank=4");
  expect_invalid(0, 4, -1, "dsize=-1");
}

}  // namespace
}  // namespace flexmpi
