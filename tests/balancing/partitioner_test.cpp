#include "balancing/partitioner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "balancing/rcp/rcp_partitioner.hpp"
#include "config/config.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

std::int64_t sum(const std::vector<std::int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::int64_t{0});
}

TEST(ProportionalCounts, ExactProportions) {
  EXPECT_EQ(proportional_counts(900, {2.0, 1.0}, 1), (std::vector<std::int64_t>{600, 300}));
  EXPECT_EQ(proportional_counts(1000, {1.0, 1.0, 2.0}, 0),
            (std::vector<std::int64_t>{250, 250, 500}));
}

TEST(ProportionalCounts, RoundingKeepsTheSumExact) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> share(0.01, 10.0);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> shares(1 + trial % 17);
    for (double& s : shares) s = share(random);
    const std::int64_t total = 1 + trial * 37;
    const auto counts = proportional_counts(total, shares, 1);
    EXPECT_EQ(sum(counts), total);
    const double share_sum = std::accumulate(shares.begin(), shares.end(), 0.0);
    for (std::size_t i = 0; i < shares.size(); ++i) {
      if (total >= static_cast<std::int64_t>(shares.size())) {
        EXPECT_GE(counts[i], 1);
      }
      EXPECT_LE(std::abs(static_cast<double>(counts[i]) - total * shares[i] / share_sum),
                1.0 + static_cast<double>(shares.size()));
    }
  }
}

TEST(ProportionalCounts, MinimumDroppedWhenRowsAreTooFew) {
  const auto counts = proportional_counts(2, {1.0, 1.0, 1.0}, 1);
  EXPECT_EQ(sum(counts), 2);
}

TEST(ProportionalCounts, RejectsZeroShares) {
  EXPECT_THROW(proportional_counts(10, {0.0, 0.0}, 0), Error);
  EXPECT_THROW(proportional_counts(10, {}, 0), Error);
}

TEST(CutByWork, EqualWorkPerUnitOfPower) {
  // 8 rows: the first four cost 3 each, the last four 1 each (total 16).
  const std::vector<double> row_work = {3, 3, 3, 3, 1, 1, 1, 1};
  const Decomposition equal = cut_by_work(row_work, {1.0, 1.0});
  EXPECT_EQ(equal, (Decomposition{{3, 0}, {5, 3}}));  // work 9 and 7: the closest cut to 8
  const Decomposition skewed = cut_by_work(row_work, {3.0, 1.0});
  EXPECT_EQ(skewed, (Decomposition{{4, 0}, {4, 4}}));  // work 12 and 4, exactly 3:1
}

TEST(CutByWork, EveryProcessGetsARowAndBlocksCover) {
  std::mt19937 random(3);
  std::uniform_real_distribution<double> weight(0.0, 5.0);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<double> row_work(5 + trial);
    for (double& w : row_work) w = weight(random);
    std::vector<double> shares(1 + trial % 5, 1.0);
    shares[0] = 50.0;  // one very fast process must not starve the others
    const Decomposition blocks = cut_by_work(row_work, shares);
    ASSERT_TRUE(covers_exactly(blocks, static_cast<std::int64_t>(row_work.size())));
    for (const RowBlock& b : blocks) EXPECT_GE(b.count, 1);
  }
}

TEST(CoversExactly, DetectsGapsOverlapsAndNegativeCounts) {
  EXPECT_TRUE(covers_exactly({{2, 0}, {3, 2}}, 5));
  EXPECT_FALSE(covers_exactly({{2, 0}, {3, 3}}, 6));    // gap
  EXPECT_FALSE(covers_exactly({{3, 0}, {3, 2}}, 5));    // overlap
  EXPECT_FALSE(covers_exactly({{-1, 0}, {6, -1}}, 5));  // negative
  EXPECT_FALSE(covers_exactly({{2, 0}, {2, 2}}, 5));    // short
}

TEST(RcpPartitioner, SpeedsOneAndHalfGiveTwoToOne) {
  RcpPartitioner rcp;
  PartitionInput input;
  input.global_size = 3000;
  input.current = {{1500, 0}, {1500, 1500}};
  input.speed = {1000.0, 500.0};
  const PartitionResult result = rcp.partition(input);
  EXPECT_TRUE(result.fallback.empty());
  EXPECT_EQ(result.blocks, (Decomposition{{2000, 0}, {1000, 2000}}));
}

TEST(RcpPartitioner, ConstantSpeedsGiveExactlyTheProportionalPartition) {
  RcpPartitioner rcp;
  PartitionInput input;
  input.global_size = 1500;
  input.current = block_decomposition(1500, 3);
  input.speed = {1.0, 2.0, 2.0};
  EXPECT_EQ(rcp.partition(input).blocks, (Decomposition{{300, 0}, {600, 300}, {600, 900}}));
}

TEST(RcpPartitioner, UnmeasurableSpeedKeepsThePartitionAndSaysWhy) {
  RcpPartitioner rcp;
  PartitionInput input;
  input.global_size = 10;
  input.current = {{5, 0}, {5, 5}};
  for (double bad : {0.0, -1.0, std::nan("")}) {
    input.speed = {1.0, bad};
    const PartitionResult result = rcp.partition(input);
    EXPECT_EQ(result.blocks, input.current);
    EXPECT_NE(result.fallback.find("process 1"), std::string::npos);
  }
}

TEST(RcpPartitioner, RowWorkModelBalancesWorkNotRows) {
  RcpPartitioner rcp;
  PartitionInput input;
  input.global_size = 8;
  input.current = {{4, 0}, {4, 4}};
  input.speed = {1.0, 1.0};
  input.row_work = {3, 3, 3, 3, 1, 1, 1, 1};
  EXPECT_EQ(rcp.partition(input).blocks, (Decomposition{{3, 0}, {5, 3}}));
}

TEST(PartitionerRegistry, KnowsRcpAndRejectsUnknownNames) {
  EXPECT_EQ(make_partitioner("rcp", Config{})->name(), "rcp");
  try {
    make_partitioner("magic", Config{});
    FAIL() << "an unknown partitioner was created";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bad_config);
    EXPECT_NE(std::string(e.what()).find("rcp"), std::string::npos);
  }
}

TEST(BlockDecomposition, FirstRanksGetTheRemainder) {
  EXPECT_EQ(block_decomposition(10, 3), (Decomposition{{4, 0}, {3, 4}, {3, 7}}));
  EXPECT_EQ(block_decomposition(0, 2), (Decomposition{{0, 0}, {0, 0}}));
  EXPECT_THROW(block_decomposition(10, 0), Error);
}

}  // namespace
}  // namespace flexmpi

TEST(SplitRows, ByTheRowWorkWhenKnownElseByCount) {
  // 6 rows: the first three weigh 1, the last three 5; three equal shares.
  const std::vector<double> work = {1, 1, 1, 5, 5, 5}, shares = {1, 1, 1};
  EXPECT_EQ(flexmpi::split_rows(6, work, shares), (std::vector<std::int64_t>{4, 1, 1}));
  EXPECT_EQ(flexmpi::split_rows(6, {}, shares),
            (std::vector<std::int64_t>{2, 2, 2}));  // count model
  EXPECT_EQ(flexmpi::split_rows(6, {1, 1}, shares),
            (std::vector<std::int64_t>{2, 2, 2}));  // stale size
  EXPECT_EQ(flexmpi::split_rows(6, std::vector<double>(6, 0.0), shares),
            (std::vector<std::int64_t>{2, 2, 2}));  // no work seen
}
