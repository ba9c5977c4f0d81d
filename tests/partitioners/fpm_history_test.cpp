// The partial models every FPM partitioner keeps (FPM paper sec. 2.2, 4):
// points sorted by size, near-duplicates merged, the oldest dropped, and
// the measurement read from PartitionInput.
#include <gtest/gtest.h>

#include <cmath>

#include "balancing/fpm/speed_history.hpp"

namespace flexmpi {
namespace {

TEST(SpeedHistory, KeepsPointsSortedBySize) {
  SpeedHistory history;
  history.reset(2, 1000.0);
  history.add(0, 500.0, 10.0);
  history.add(0, 200.0, 12.0);
  history.add(0, 800.0, 8.0);
  EXPECT_EQ(history.points(0), (std::vector<SpeedPoint>{{200, 12}, {500, 10}, {800, 8}}));
  EXPECT_TRUE(history.points(1).empty());
}

TEST(SpeedHistory, IdenticalOrNearSizesAreAveraged) {
  SpeedHistory history(32, 0.004);  // within 0.4 % of the size
  history.reset(1, 1000.0);
  history.add(0, 500.0, 10.0);
  history.add(0, 500.0, 12.0);  // the same size measured again
  EXPECT_EQ(history.points(0), (std::vector<SpeedPoint>{{500.0, 11.0}}));
  history.add(0, 501.0, 13.0);
  EXPECT_EQ(history.points(0), (std::vector<SpeedPoint>{{500.5, 12.0}}));
  history.add(0, 510.0, 9.0);
  EXPECT_EQ(history.points(0).size(), 2u);
}

TEST(SpeedHistory, DropsTheOldestBeyondItsCapacity) {
  SpeedHistory history(3, 0.0);
  history.reset(1, 1000.0);
  history.add(0, 100.0, 1.0);  // oldest
  history.add(0, 300.0, 3.0);
  history.add(0, 200.0, 2.0);
  history.add(0, 400.0, 4.0);
  EXPECT_EQ(history.points(0), (std::vector<SpeedPoint>{{200, 2}, {300, 3}, {400, 4}}));
}

TEST(SpeedHistory, IgnoresUnusablePoints) {
  SpeedHistory history;
  history.reset(1, 1000.0);
  history.add(0, 0.0, 1.0);
  history.add(0, -5.0, 1.0);
  history.add(0, 100.0, 0.0);
  history.add(0, 100.0, std::nan(""));
  history.add(0, std::nan(""), 1.0);
  history.add(3, 100.0, 1.0);  // no such process
  EXPECT_TRUE(history.points(0).empty());
}

TEST(SpeedHistory, ResetForgetsAndResizes) {
  SpeedHistory history;
  history.reset(2, 1000.0);
  history.add(1, 100.0, 1.0);
  history.reset(3, 2000.0);
  EXPECT_EQ(history.processes(), 3u);
  EXPECT_EQ(history.total(), 2000.0);
  EXPECT_TRUE(history.points(1).empty());
}

TEST(Measure, SizesFromBlocksAndTimesPerIteration) {
  PartitionInput input;
  input.global_size = 1000;
  input.current = {{400, 0}, {600, 400}};
  input.computation_time = {2.0, 3.0};
  input.iterations = {10.0, 10.0};
  FpmMeasurement m;
  ASSERT_EQ(measure(input, m), "");
  EXPECT_EQ(m.total, 1000.0);
  EXPECT_EQ(m.size, (std::vector<double>{400.0, 600.0}));
  EXPECT_EQ(m.time, (std::vector<double>{0.2, 0.3}));
}

TEST(Measure, TimeTheCoreRanAnotherJobIsRemoved) {
  // Process 1 had its core 80 % of the interval (Tcpu / Treal): a dedicated
  // processor would have computed in 80 % of the time.
  PartitionInput input;
  input.global_size = 1000;
  input.current = {{500, 0}, {500, 500}};
  input.computation_time = {1.0, 1.0};
  input.wall_time = {1.1, 1.25};
  input.cpu_time = {1.1, 1.0};
  FpmMeasurement m;
  ASSERT_EQ(measure(input, m), "");
  EXPECT_DOUBLE_EQ(m.time[0], 1.0);
  EXPECT_DOUBLE_EQ(m.time[1], 0.8);
  input.cpu_time = {1.2, 0.0};  // more CPU than wall (clock skew), no CPU time: ignored
  ASSERT_EQ(measure(input, m), "");
  EXPECT_EQ(m.time, (std::vector<double>{1.0, 1.0}));
}

TEST(Measure, RowWorkModelSizesAreBlockWorkloads) {
  PartitionInput input;
  input.global_size = 4;
  input.current = {{1, 0}, {3, 1}};
  input.row_work = {5, 1, 1, 1};
  input.computation_time = {1.0, 1.0};
  FpmMeasurement m;
  ASSERT_EQ(measure(input, m), "");
  EXPECT_EQ(m.total, 8.0);
  EXPECT_EQ(m.size, (std::vector<double>{5.0, 3.0}));
  EXPECT_EQ(m.time, (std::vector<double>{1.0, 1.0}));  // no iterations given: 1 each
}

TEST(Measure, SaysWhatIsWrong) {
  PartitionInput input;
  input.global_size = 1000;
  input.current = {{500, 0}, {500, 500}};
  FpmMeasurement m;
  EXPECT_NE(measure(input, m), "");  // no times
  for (double bad : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
    input.computation_time = {1.0, bad};
    EXPECT_NE(measure(input, m).find("process 1"), std::string::npos);
  }
  input.computation_time = {1.0, 1.0};
  input.iterations = {10.0, 0.0};
  EXPECT_NE(measure(input, m).find("process 1"), std::string::npos);
  input.iterations.clear();
  input.current = {{500, 0}, {400, 500}};  // does not cover the rows
  EXPECT_NE(measure(input, m), "");
}

TEST(BlocksForSizes, RoundsKeepingTheSumAndCutsWork) {
  PartitionInput input;
  input.global_size = 10;
  EXPECT_EQ(blocks_for_sizes(input, {3.4, 6.6}), (Decomposition{{3, 0}, {7, 3}}));
  EXPECT_EQ(blocks_for_sizes(input, {-0.5, 10.5}),
            (Decomposition{{1, 0}, {9, 1}}));  // at least a row
  input.global_size = 4;
  input.row_work = {5, 1, 1, 1};
  EXPECT_EQ(blocks_for_sizes(input, {5.0, 3.0}), (Decomposition{{1, 0}, {3, 1}}));
}

TEST(RelativeImbalance, IsMaxMinusMinOverMax) {
  EXPECT_DOUBLE_EQ(relative_imbalance({1.0, 2.0, 4.0}), 0.75);
  EXPECT_EQ(relative_imbalance({}), 0.0);
}

}  // namespace
}  // namespace flexmpi
