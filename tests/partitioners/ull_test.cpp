// The ULL balancing rule (Galindo et al., sec. 3-4): RP = counts / T,
// truncated shares with the remainder to the last process, the threshold
// test, and the "ull" partitioner on flexmpi's PartitionInput.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "balancing/ull/ull_partitioner.hpp"
#include "core/ull_calibrator.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

using Counts = std::vector<std::int64_t>;

TEST(UllCounts, ThePapersExample) {
  // sec. 3: 1500 rows, 500 each, in 400/200/100 us -> 214/428/858.
  EXPECT_EQ(ull_counts({500, 500, 500}, {400.0, 200.0, 100.0}, 1500), (Counts{214, 428, 858}));
}

TEST(UllCounts, TheSecondIterationIsBalanced) {
  // Iteration 1 of the example: 171 us each, so RP is proportional to the
  // counts and they stay.
  EXPECT_EQ(ull_counts({214, 428, 858}, {171.0, 171.0, 171.0}, 1500), (Counts{214, 428, 858}));
}

TEST(UllCounts, ConstantSpeedsGiveTheProportionalPartition) {
  // Speeds 1:2:2 measured on an even split: exactly 300/600/600.
  EXPECT_EQ(ull_counts({500, 500, 500}, {2.0, 1.0, 1.0}, 1500), (Counts{300, 600, 600}));
  EXPECT_EQ(ull_counts({100, 900}, {1.0, 3.0}, 1000), (Counts{250, 750}));
}

TEST(UllCounts, AlwaysAddsUpAndKeepsEveryProcessTimed) {
  for (std::int64_t size : {3, 7, 100, 1501, 99991}) {
    const Counts counts = ull_counts({1, 1, size - 2}, {1000.0, 1.0, 1.0}, size);
    EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), std::int64_t{0}), size);
    for (const auto c : counts) EXPECT_GE(c, 1) << size;
  }
}

TEST(UllCounts, DegenerateInputIsAnErrorNamingTheProcess) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double bad : {0.0, -5.0, nan, std::numeric_limits<double>::infinity()}) {
    try {
      ull_counts({500, 500}, {100.0, bad}, 1000);
      ADD_FAILURE() << "accepted time " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("process 1"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(ull_counts({500, -1}, {1.0, 1.0}, 1000), Error);
  EXPECT_THROW(ull_counts({0, 0}, {1.0, 1.0}, 1000), Error);  // no work measured
  EXPECT_THROW(ull_counts({500}, {1.0, 1.0}, 1000), Error);
  EXPECT_THROW(ull_counts({}, {}, 1000), Error);
}

TEST(UllThreshold, BalancesOnlyAboveTheThreshold) {
  EXPECT_TRUE(ull_should_balance({400.0, 200.0, 100.0}, 100.0));  // 300 > 100
  EXPECT_FALSE(ull_should_balance({171.0, 171.0, 171.0}, 100.0));
  EXPECT_FALSE(ull_should_balance({200.0, 100.0}, 100.0));  // strictly greater
  EXPECT_TRUE(ull_should_balance({200.5, 100.0}, 100.0));
  EXPECT_FALSE(ull_should_balance({}, 0.0));
}

PartitionInput input_for(std::vector<std::int64_t> counts, std::vector<double> seconds) {
  PartitionInput input;
  input.current = blocks_from_counts(counts);
  input.global_size = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  input.computation_time = std::move(seconds);
  input.iterations.assign(counts.size(), 10.0);
  return input;
}

TEST(UllPartitioner, ThePapersExampleThroughPartitionInput) {
  UllPartitioner ull;
  // 10 iterations of 400/200/100 us.
  const PartitionResult result = ull.partition(input_for({500, 500, 500}, {4e-3, 2e-3, 1e-3}));
  EXPECT_TRUE(result.fallback.empty()) << result.fallback;
  EXPECT_EQ(result.blocks, (Decomposition{{214, 0}, {428, 214}, {858, 642}}));
}

TEST(UllPartitioner, ThresholdIsPerIteration) {
  UllPartitioner ull(150e-6);  // 150 us
  // 300 us apart per iteration: balance. 100 us apart: keep.
  EXPECT_NE(ull.partition(input_for({500, 500, 500}, {4e-3, 2e-3, 1e-3})).blocks,
            blocks_from_counts({500, 500, 500}));
  const PartitionInput close = input_for({500, 500}, {2e-3, 1e-3});
  const PartitionResult kept = ull.partition(close);
  EXPECT_EQ(kept.blocks, close.current);
  EXPECT_TRUE(kept.fallback.empty());
}

TEST(UllPartitioner, DegenerateInputKeepsThePartitionAndSaysWhy) {
  UllPartitioner ull;
  for (double bad : {0.0, -1.0, std::nan("")}) {
    const PartitionInput input = input_for({500, 500}, {1e-3, bad});
    const PartitionResult result = ull.partition(input);
    EXPECT_EQ(result.blocks, input.current);
    EXPECT_NE(result.fallback.find("process 1"), std::string::npos) << result.fallback;
  }
  const PartitionInput one = input_for({1000}, {1e-3});
  const PartitionResult single = ull.partition(one);
  EXPECT_EQ(single.blocks, one.current);
  EXPECT_NE(single.fallback.find("one process"), std::string::npos);
}

TEST(UllPartitioner, RowWorkModelBalancesWork) {
  UllPartitioner ull;
  PartitionInput input = input_for({4, 4}, {1.0, 1.0});
  input.row_work = {3, 3, 3, 3, 1, 1, 1, 1};  // process 0 did 12 units, process 1 did 4, same time
  // RP 12 : 4 = 3 : 1 of 16 units: 12 and 4, the same blocks.
  EXPECT_EQ(ull.partition(input).blocks, (Decomposition{{4, 0}, {4, 4}}));
}

TEST(UllCalibratorArrays, BlockPartitionAndChecks) {
  std::vector<int> counts(3), displs(3);
  ull_block_partition(counts, displs, 2, 1501);
  EXPECT_EQ(counts, (std::vector<int>{1002, 1000, 1000}));
  EXPECT_EQ(displs, (std::vector<int>{0, 1002, 2002}));
  EXPECT_NO_THROW(check_ull_partition(counts, displs, 2, 1501));
  EXPECT_THROW(check_ull_partition(counts, displs, 2, 1500), Error);  // wrong sum
  counts[0] = 1001;
  EXPECT_THROW(check_ull_partition(counts, displs, 2, 1501), Error);  // not a multiple of 2
  EXPECT_THROW(check_ull_partition(counts, displs, 0, 1501), Error);
  std::vector<int> c = {500, 500}, d = {0, 499};
  try {
    check_ull_partition(c, d, 1, 1000);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("displs[1]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace flexmpi
