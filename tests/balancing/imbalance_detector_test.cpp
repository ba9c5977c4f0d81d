// Algorithm 5 (thesis 5.2.1) as a table: sequences of dedicated / shared
// intervals, k and thresholds -> burst, long-term and rebalance decisions.
#include "balancing/imbalance_detector.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

// One interval on two processes: computation times, and whether process 1's
// PE is shared (CPU time 60% of wall time) or dedicated (CPU = wall).
struct Interval {
  double computation0, computation1;
  bool shared1;
};

struct Case {
  std::string name;
  int k;
  std::vector<Interval> intervals;
  std::vector<Interference> interference;
  std::vector<bool> rebalance;
};

BalanceVerdict run_interval(ImbalanceDetector& detector, const Interval& interval) {
  const std::vector<double> computation = {interval.computation0, interval.computation1};
  const std::vector<double> wall = computation;
  const std::vector<double> cpu = {interval.computation0, interval.shared1
                                                              ? 0.6 * interval.computation1
                                                              : interval.computation1};
  return detector.evaluate(computation, wall, cpu);
}

class AlgorithmFive : public ::testing::TestWithParam<Case> {};

TEST_P(AlgorithmFive, Decisions) {
  const Case& c = GetParam();
  ImbalanceDetector detector(0.15, 0.05, c.k);
  for (std::size_t n = 0; n < c.intervals.size(); ++n) {
    const BalanceVerdict verdict = run_interval(detector, c.intervals[n]);
    EXPECT_EQ(verdict.interference, c.interference[n]) << "interval " << n;
    EXPECT_EQ(verdict.rebalance, c.rebalance[n]) << "interval " << n;
  }
}

constexpr Interval balanced{1.0, 1.0, false};
constexpr Interval unbalanced{1.0, 2.0, false};
constexpr Interval shared_unbalanced{1.0, 2.0, true};
constexpr Interval shared_balanced{1.0, 1.05, true};
using I = Interference;

INSTANTIATE_TEST_SUITE_P(
    Table, AlgorithmFive,
    ::testing::Values(Case{"dedicated_balanced_never_moves",
                           3,
                           {balanced, balanced, balanced},
                           {I::none, I::none, I::none},
                           {false, false, false}},
                      Case{"dedicated_unbalanced_moves_at_once",
                           3,
                           {unbalanced, balanced},
                           {I::none, I::none},
                           {true, false}},
                      Case{"k1_every_shared_interval_is_long_term",
                           1,
                           {shared_unbalanced, balanced, shared_unbalanced},
                           {I::long_term, I::none, I::long_term},
                           {true, false, true}},
                      Case{"k3_bursts_tolerated_then_long_term",
                           3,
                           {shared_unbalanced, shared_unbalanced, shared_unbalanced,
                            shared_unbalanced},
                           {I::burst, I::burst, I::long_term, I::long_term},
                           {false, false, true, true}},
                      Case{"k3_burst_interrupted_by_dedicated_restarts_count",
                           3,
                           {shared_unbalanced, shared_unbalanced, unbalanced, shared_unbalanced,
                            shared_unbalanced, shared_unbalanced},
                           {I::burst, I::burst, I::none, I::burst, I::burst, I::long_term},
                           {false, false, true, false, false, true}},
                      Case{"k5_needs_five_shared_intervals",
                           5,
                           {shared_unbalanced, shared_unbalanced, shared_unbalanced,
                            shared_unbalanced, shared_unbalanced},
                           {I::burst, I::burst, I::burst, I::burst, I::long_term},
                           {false, false, false, false, true}},
                      Case{"long_term_but_balanced_does_not_move",
                           2,
                           {shared_balanced, shared_balanced},
                           {I::burst, I::long_term},
                           {false, false}}),
    [](const auto& info) { return info.param.name; });

TEST(ImbalanceDetector, ImbalanceIsMaxMinusMinOverMax) {
  ImbalanceDetector detector(0.15, 0.05, 3);
  const BalanceVerdict verdict =
      detector.evaluate({2.0, 1.0, 1.5}, {2.0, 1.0, 1.5}, {2.0, 1.0, 1.5});
  EXPECT_DOUBLE_EQ(verdict.imbalance, 0.5);
  EXPECT_TRUE(verdict.unbalanced);
}

TEST(ImbalanceDetector, ThresholdIsStrict) {
  ImbalanceDetector detector(0.25, 0.05, 3);
  EXPECT_FALSE(detector.evaluate({1.0, 0.75}, {1.0, 0.75}, {1.0, 0.75}).unbalanced);
  EXPECT_TRUE(detector.evaluate({1.0, 0.74}, {1.0, 0.74}, {1.0, 0.74}).unbalanced);
}

TEST(ImbalanceDetector, DedicatedThresholdSeparatesNoiseFromLoad) {
  ImbalanceDetector detector(0.15, 0.05, 1);
  // 4% of wall time lost to OS noise is dedicated; 6% is shared.
  const BalanceVerdict noise = detector.evaluate({1.0, 1.0}, {1.0, 1.0}, {0.96, 1.0});
  EXPECT_TRUE(noise.system_dedicated);
  const BalanceVerdict load = detector.evaluate({1.0, 1.0}, {1.0, 1.0}, {0.94, 1.0});
  EXPECT_FALSE(load.system_dedicated);
  EXPECT_EQ(load.shared, (std::vector<bool>{true, false}));
}

TEST(ImbalanceDetector, ZeroTimesAreBalancedAndDedicated) {
  ImbalanceDetector detector(0.15, 0.05, 3);
  const BalanceVerdict verdict = detector.evaluate({0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0});
  EXPECT_FALSE(verdict.unbalanced);
  EXPECT_TRUE(verdict.system_dedicated);
  EXPECT_FALSE(verdict.rebalance);
}

TEST(ImbalanceDetector, RejectsBadParameters) {
  EXPECT_THROW(ImbalanceDetector(0.0, 0.05, 3), Error);
  EXPECT_THROW(ImbalanceDetector(0.15, 1.0, 3), Error);
  EXPECT_THROW(ImbalanceDetector(0.15, 0.05, 0), Error);
  ImbalanceDetector detector(0.15, 0.05, 3);
  EXPECT_THROW(detector.evaluate({1.0}, {1.0, 1.0}, {1.0}), Error);
}

TEST(ImbalanceDetector, ResetForgetsHistory) {
  ImbalanceDetector detector(0.15, 0.05, 2);
  run_interval(detector, shared_unbalanced);
  detector.reset();
  EXPECT_EQ(run_interval(detector, shared_unbalanced).interference, Interference::burst);
}

}  // namespace
}  // namespace flexmpi
