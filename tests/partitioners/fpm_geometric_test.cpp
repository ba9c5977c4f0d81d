// fpm-geometric (FPM paper sec. 2): shape-restricted piecewise-linear speed
// functions and the bisection between lines through the origin.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "balancing/fpm/piecewise_linear_speed.hpp"
#include "balancing/fpm_geometric/fpm_geometric_partitioner.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

using Points = std::vector<SpeedPoint>;

TEST(PiecewiseLinearSpeed, IncreasingPartIsRaisedToItsConcaveHull) {
  // (200, 5) lies below the chord (100, 4) - (300, 8): raised to 6.
  const PiecewiseLinearSpeed f({{100, 4}, {200, 5}, {300, 8}, {400, 7}});
  EXPECT_EQ(f.knots(), (Points{{100, 4}, {200, 6}, {300, 8}, {400, 7}}));
}

TEST(PiecewiseLinearSpeed, DecreasingPartNeverRisesAgain) {
  // After the peak (200, 10): 6 then 7 -> 6, 6.
  const PiecewiseLinearSpeed f({{100, 9}, {200, 10}, {300, 6}, {400, 7}});
  EXPECT_EQ(f.knots()[2].speed, 6.0);
  EXPECT_EQ(f.knots()[3].speed, 6.0);
}

TEST(PiecewiseLinearSpeed, AnyLineThroughTheOriginMeetsItOnce) {
  // A steep rise from the constant extension: (100, 1) -> (200, 10) would make
  // t = x / s fall from 100 to 20; s_2 is lowered until t increases.
  const PiecewiseLinearSpeed f({{100, 1}, {200, 10}, {300, 11}});
  for (std::size_t j = 1; j < f.knots().size(); ++j) {
    EXPECT_GT(f.knots()[j].size / f.knots()[j].speed,
              f.knots()[j - 1].size / f.knots()[j - 1].speed);
  }
  // t strictly increasing everywhere, and size_at_time its inverse.
  double previous = 0.0;
  for (double x = 1.0; x < 1000.0; x += 3.7) {
    const double t = f.time(x);
    EXPECT_GT(t, previous) << x;
    previous = t;
    EXPECT_NEAR(f.size_at_time(t), x, 1e-7 * x) << x;
  }
}

TEST(PiecewiseLinearSpeed, ConstantExtensionsAndErrors) {
  const PiecewiseLinearSpeed f({{500, 2}});
  EXPECT_EQ(f.speed(1.0), 2.0);
  EXPECT_EQ(f.speed(1e9), 2.0);
  EXPECT_DOUBLE_EQ(f.size_at_time(100.0), 200.0);
  EXPECT_THROW(PiecewiseLinearSpeed({{0, 2}, {100, -1}}), Error);
}

TEST(BisectLines, ConstantSpeedsGiveTheProportionalSizes) {
  const std::vector<PiecewiseLinearSpeed> speeds = {PiecewiseLinearSpeed({{500, 1}}),
                                                    PiecewiseLinearSpeed({{500, 2}}),
                                                    PiecewiseLinearSpeed({{500, 2}})};
  const BisectionResult result = bisect_lines(speeds, 1500.0);
  EXPECT_NEAR(result.sizes[0], 300.0, 1e-6);
  EXPECT_NEAR(result.sizes[1], 600.0, 1e-6);
  EXPECT_NEAR(result.sizes[2], 600.0, 1e-6);
  EXPECT_NEAR(std::accumulate(result.sizes.begin(), result.sizes.end(), 0.0), 1500.0, 1e-9);
  EXPECT_GT(result.iterations, 0);
  EXPECT_LT(result.iterations, 100);
}

TEST(BisectLines, KnownPiecewiseLinearCase) {
  // s_0 = 1; s_1 through (1000,1) (2000,1) (3000,0.5): for n = 5000 the line
  // meets s_1 on its falling piece s = 2 - 0.0005 x at
  // x_1^2 - 11000 x_1 + 2e7 = 0 (FPM paper Fig. 2).
  const std::vector<PiecewiseLinearSpeed> speeds = {
      PiecewiseLinearSpeed({{2500, 1}}), PiecewiseLinearSpeed({{1000, 1}, {2000, 1}, {3000, 0.5}})};
  const BisectionResult result = bisect_lines(speeds, 5000.0);
  const double root = (11000.0 - std::sqrt(4.1e7)) / 2.0;  // 2298.44
  EXPECT_NEAR(result.sizes[1], root, 1e-5);
  EXPECT_NEAR(result.sizes[0], 5000.0 - root, 1e-5);
  EXPECT_NEAR(result.time, 5000.0 - root, 1e-5);
}

PartitionInput interval(std::vector<std::int64_t> counts, std::vector<double> seconds) {
  PartitionInput input;
  input.current = blocks_from_counts(counts);
  input.global_size = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  input.computation_time = std::move(seconds);
  return input;
}

TEST(FpmGeometricPartitioner, ConstantSpeedsGiveExactlyTheProportionalPartition) {
  FpmGeometricPartitioner geometric;
  const PartitionResult result = geometric.partition(interval({500, 500, 500}, {2.0, 1.0, 1.0}));
  EXPECT_TRUE(result.fallback.empty()) << result.fallback;
  EXPECT_EQ(result.blocks, (Decomposition{{300, 0}, {600, 300}, {600, 900}}));
  EXPECT_EQ(geometric.last_stats().method, "bisection");
}

TEST(FpmGeometricPartitioner, KnownPiecewiseCaseThroughTheHistory) {
  FpmGeometricPartitioner geometric;
  // Measurements of the case above (seconds per iteration = x / s(x), 1 us per unit).
  geometric.partition(interval({4000, 1000}, {4000e-6, 1000e-6}));
  geometric.partition(interval({3000, 2000}, {3000e-6, 2000e-6}));
  const PartitionResult result = geometric.partition(interval({2000, 3000}, {2000e-6, 6000e-6}));
  EXPECT_EQ(result.blocks, (Decomposition{{2702, 0}, {2298, 2702}}));
}

TEST(FpmGeometricPartitioner, DegenerateInputKeepsThePartition) {
  FpmGeometricPartitioner geometric;
  for (double bad : {0.0, -1.0, std::nan("")}) {
    const PartitionInput input = interval({500, 500}, {1.0, bad});
    const PartitionResult result = geometric.partition(input);
    EXPECT_EQ(result.blocks, input.current);
    EXPECT_NE(result.fallback.find("fpm-geometric: "), std::string::npos);
  }
}

TEST(FpmGeometricPartitioner, TenThousandProcesses) {
  std::mt19937 random(2);
  std::uniform_real_distribution<double> seconds(1e-3, 1e-2);
  std::vector<std::int64_t> counts(10000, 100);
  std::vector<double> times(10000);
  for (double& t : times) t = seconds(random);
  FpmGeometricPartitioner geometric;
  const PartitionResult result = geometric.partition(interval(counts, times));
  EXPECT_TRUE(covers_exactly(result.blocks, 1'000'000));
  EXPECT_TRUE(geometric.last_stats().converged);
}

}  // namespace
}  // namespace flexmpi
