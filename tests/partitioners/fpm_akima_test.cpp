// fpm-akima (FPM paper sec. 3): the Akima models with the extension below
// 5 points, the system F(x) = 0 of eq. (2) solved with the analytic
// Jacobian of eq. (5), and the partitioner's fallbacks.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "balancing/fpm_akima/akima_speed_function.hpp"
#include "balancing/fpm_akima/balance_solver.hpp"
#include "balancing/fpm_akima/fpm_akima_partitioner.hpp"
#include "balancing/rcp/rcp_partitioner.hpp"
#include "flexmpi/error.hpp"

namespace flexmpi {
namespace {

using Points = std::vector<SpeedPoint>;

// ---- the extension of sec. 3.2 ----------------------------------------------

TEST(AkimaKnots, OnePointIsAConstantModelOfFiveKnots) {
  // k = 1: (0,s1) (x1/2,s1) (x1,s1) (midpoint of [x1,n],s1) (n,s1).
  EXPECT_EQ(akima_knots({{250, 4}}, 1000),
            (Points{{0, 4}, {125, 4}, {250, 4}, {625, 4}, {1000, 4}}));
  // x1 = n/p of the paper's first iteration with p = 2: the printed (n - x1)/2
  // would be 250 < x1; the midpoint 750 keeps the abscissae increasing.
  EXPECT_EQ(akima_knots({{500, 4}}, 1000),
            (Points{{0, 4}, {250, 4}, {500, 4}, {750, 4}, {1000, 4}}));
}

TEST(AkimaKnots, TwoPoints) {
  // k = 2: (0,s1) (x1,s1) (x2,s2) (midpoint of [x2,n],s2) (n,s2).
  EXPECT_EQ(akima_knots({{600, 3}, {200, 5}}, 1000),
            (Points{{0, 5}, {200, 5}, {600, 3}, {800, 3}, {1000, 3}}));
}

TEST(AkimaKnots, ThreePointsAndMore) {
  // k = 3: (0,s1) (x1,s1) (x2,s2) (x3,s3) (n,s3); k >= 5: the two end points
  // added as for every model (sec. 3.2).
  EXPECT_EQ(akima_knots({{100, 1}, {300, 2}, {700, 3}}, 1000),
            (Points{{0, 1}, {100, 1}, {300, 2}, {700, 3}, {1000, 3}}));
  EXPECT_EQ(akima_knots({{100, 1}, {200, 2}, {300, 3}, {400, 4}}, 1000),
            (Points{{0, 1}, {100, 1}, {200, 2}, {300, 3}, {400, 4}, {1000, 4}}));
  EXPECT_EQ(akima_knots({{100, 1}, {200, 2}, {300, 3}, {400, 4}, {500, 5}}, 1000).size(), 7u);
}

TEST(AkimaKnots, PointsOutsideTheProblemAreDropped) {
  EXPECT_EQ(akima_knots({{1000, 2}, {500, 1}, {0, 9}, {-3, 9}}, 1000),
            (Points{{0, 1}, {250, 1}, {500, 1}, {750, 1}, {1000, 1}}));
  EXPECT_TRUE(akima_knots({{1000, 2}}, 1000).empty());
  EXPECT_THROW(AkimaSpeedFunction({{1000, 2}}, 1000), Error);
}

TEST(AkimaSpeedFunction, OnePointGivesAConstantSpeed) {
  const AkimaSpeedFunction f({{500, 4}}, 1000);
  for (double x : {0.0, 1.0, 333.0, 500.0, 999.0, 1000.0, 2000.0, -5.0}) {
    EXPECT_DOUBLE_EQ(f.speed(x), 4.0) << x;
    EXPECT_DOUBLE_EQ(f.slope(x), 0.0) << x;
  }
  EXPECT_DOUBLE_EQ(f.time(800.0), 200.0);
  EXPECT_DOUBLE_EQ(f.time_derivative(800.0), 0.25);
}

TEST(AkimaSpeedFunction, PassesThroughThePointsWithAContinuousDerivative) {
  const Points points = {{100, 10}, {300, 9}, {450, 4}, {600, 3.5}, {800, 3.4}, {900, 1}};
  const AkimaSpeedFunction f(points, 1000);
  for (const SpeedPoint& p : points) EXPECT_NEAR(f.speed(p.size), p.speed, 1e-12);
  // t'(x) of eq. (5) against central differences, and s' continuous across knots.
  for (double x = 20.0; x < 990.0; x += 37.0) {
    const double h = 1e-4;
    EXPECT_NEAR(f.time_derivative(x), (f.time(x + h) - f.time(x - h)) / (2 * h),
                1e-6 * (1 + std::abs(f.time_derivative(x))))
        << x;
  }
  for (const SpeedPoint& p : points) {
    EXPECT_NEAR(f.slope(p.size - 1e-7), f.slope(p.size + 1e-7), 1e-5) << p.size;
  }
  for (double x = 0.0; x <= 1000.0; x += 1.0) EXPECT_GT(f.speed(x), 0.0);
}

TEST(AkimaSpeedFunction, RefitIsTheFunctionOfTheNewPoints) {
  // As many knots as before (in place), more knots, and a refusal that leaves
  // the function as it was.
  const Points first = {{100, 10}, {300, 9}, {450, 4}};
  const Points same_count = {{150, 2}, {350, 3}, {500, 5}};
  const Points more = {{100, 10}, {300, 9}, {450, 4}, {600, 3.5}, {800, 3.4}, {900, 1}};
  AkimaSpeedFunction f(first, 1000);
  for (const Points& points : {same_count, more, first}) {
    f.refit(points, 1000);
    const AkimaSpeedFunction fresh(points, 1000);
    for (double x = 0.0; x <= 1000.0; x += 7.0) {
      EXPECT_DOUBLE_EQ(f.speed(x), fresh.speed(x)) << x;
      EXPECT_DOUBLE_EQ(f.time_derivative(x), fresh.time_derivative(x)) << x;
    }
  }
  EXPECT_THROW(f.refit({{1000, 2}}, 1000), Error);
  EXPECT_DOUBLE_EQ(f.speed(300.0), AkimaSpeedFunction(first, 1000).speed(300.0));
}

// ---- the system of eq. (2) --------------------------------------------------

// s_0 = 1 everywhere; s_1(x) = 2 - 0.0002 x sampled every 500 units: the
// Akima spline reproduces the line between the inner knots, so the root of
// eq. (2) for n = 5000 is known: x_1^2 - 20000 x_1 + 5e7 = 0.
SpeedHistory linear_case() {
  SpeedHistory history;
  history.reset(2, 5000.0);
  for (double x = 1000.0; x <= 4000.0; x += 500.0) {
    history.add(0, x, 1.0);
    history.add(1, x, 2.0 - 0.0002 * x);
  }
  return history;
}
const double kLinearRoot = (20000.0 - std::sqrt(2e8)) / 2.0;  // 2928.93...

TEST(FpmAkima, KnownPiecewiseCaseGivesTheKnownRoot) {
  FpmAkimaPartitioner akima;
  FpmMeasurement m{5000.0, {2500.0, 2500.0}, {2500.0, 2500.0 / 1.5}};
  const auto solution = akima.solve(linear_case(), m);
  ASSERT_EQ(solution.sizes.size(), 2u) << solution.fallback;
  EXPECT_TRUE(solution.fallback.empty());
  EXPECT_NEAR(solution.sizes[1], kLinearRoot, 1e-6);
  EXPECT_NEAR(solution.sizes[0], 5000.0 - kLinearRoot, 1e-6);
  EXPECT_EQ(akima.last_stats().method, "hybridsj");
  EXPECT_TRUE(akima.last_stats().converged);
  EXPECT_LE(akima.last_stats().iterations, 30);  // the paper: up to 30 near steep changes
}

TEST(FpmAkima, ArrowheadNewtonFindsTheSameRoot) {
  FpmAkimaPartitioner newton(0);  // dense limit 0: always the O(p) solver
  FpmMeasurement m{5000.0, {2500.0, 2500.0}, {2500.0, 2500.0 / 1.5}};
  const auto solution = newton.solve(linear_case(), m);
  ASSERT_EQ(solution.sizes.size(), 2u) << solution.fallback;
  EXPECT_EQ(newton.last_stats().method, "newton-arrowhead");
  EXPECT_NEAR(solution.sizes[1], kLinearRoot, 1e-6);
}

TEST(Solvers, AgreeOnManySmoothModels) {
  std::mt19937 random(11);
  std::uniform_real_distribution<double> base(1.0, 10.0), drop(0.0, 0.8);
  const std::size_t p = 60;
  const double n = 60000.0;
  std::vector<AkimaSpeedFunction> models;
  for (std::size_t i = 0; i < p; ++i) {
    const double s = base(random), d = drop(random);
    Points points;
    for (double x = 500.0; x < n; x += 3000.0) points.push_back({x, s * (1.0 - d * x / n)});
    models.emplace_back(points, n);
  }
  const TimeFunction time = [&](std::size_t i, double x, double& t, double& dt) {
    models[i].time_and_derivative(x, t, dt);
  };
  FpmSolveStats dense, arrow;
  const std::vector<double> guess(p, n / p);
  const auto a = solve_hybridsj(time, p, n, guess, dense);
  const auto b = solve_arrowhead_newton(time, p, n, guess, arrow);
  ASSERT_EQ(a.size(), p);
  ASSERT_EQ(b.size(), p);
  EXPECT_NEAR(std::accumulate(a.begin(), a.end(), 0.0), n, 1e-6 * n);
  std::vector<double> times;
  for (std::size_t i = 0; i < p; ++i) {
    EXPECT_NEAR(a[i], b[i], 1e-6 * n) << i;
    times.push_back(models[i].time(a[i]));
  }
  EXPECT_LT(relative_imbalance(times), 1e-8);
}

TEST(Solvers, ArrowheadNewtonConvergesOnThousandsOfNoisyModels) {
  // 4,096 processes of 32 speed classes, each model two measurements with 1 %
  // noise, on the equal blocks and on blocks proportional to the speeds (as
  // a balancer's first two intervals give): sizes close together, so the
  // splines are steep between them. Newton on the whole system with a line
  // search on |F|^2 stalled here (residual 2e-3 after 100 steps); on the
  // common time it converges in a few steps to equal times.
  std::mt19937 random(5);
  std::uniform_real_distribution<double> jitter(0.97, 1.03), noise(0.99, 1.01);
  const std::size_t p = 4096;
  const double n = 1000.0 * p;
  std::vector<double> speeds;
  for (std::size_t i = 0; i < p; ++i) {
    speeds.push_back((1.0 + static_cast<double>(i % 32) / 32.0) * jitter(random));
  }
  const double speed_sum = std::accumulate(speeds.begin(), speeds.end(), 0.0);
  std::vector<AkimaSpeedFunction> models;
  for (std::size_t i = 0; i < p; ++i) {
    const double proportional = n * speeds[i] / speed_sum;
    models.emplace_back(
        Points{{n / p, speeds[i] * noise(random)}, {proportional, speeds[i] * noise(random)}}, n);
  }
  const TimeFunction time = [&](std::size_t i, double x, double& t, double& dt) {
    models[i].time_and_derivative(x, t, dt);
  };
  FpmSolveStats stats;
  const auto x = solve_arrowhead_newton(time, p, n, std::vector<double>(p, n / p), stats);
  ASSERT_EQ(x.size(), p) << "residual " << stats.residual << " after " << stats.iterations;
  EXPECT_LE(stats.iterations, 20);
  EXPECT_NEAR(std::accumulate(x.begin(), x.end(), 0.0), n, 1e-9 * n);
  std::vector<double> times;
  for (std::size_t i = 0; i < p; ++i) times.push_back(models[i].time(x[i]));
  EXPECT_LT(relative_imbalance(times), 1e-8);
}

TEST(Solvers, ReportASystemWithoutRoot) {
  // t_0 >= 10 everywhere, t_1 = 1: the times can never be equal.
  const TimeFunction time = [](std::size_t i, double x, double& t, double& dt) {
    t = i == 0 ? 10.0 + x : 1.0;
    dt = i == 0 ? 1.0 : 0.0;
  };
  FpmSolveStats stats;
  EXPECT_TRUE(solve_hybridsj(time, 2, 100.0, {50.0, 50.0}, stats).empty());
  EXPECT_FALSE(stats.converged);
  EXPECT_TRUE(solve_arrowhead_newton(time, 2, 100.0, {50.0, 50.0}, stats).empty());
  EXPECT_FALSE(stats.converged);
}

// ---- the partitioner on PartitionInput --------------------------------------

PartitionInput interval(std::vector<std::int64_t> counts,
                        std::vector<double> seconds_per_iteration) {
  PartitionInput input;
  input.current = blocks_from_counts(counts);
  input.global_size = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  for (double& s : seconds_per_iteration) s *= 5.0;  // 5 iterations per interval
  input.computation_time = seconds_per_iteration;
  input.iterations.assign(counts.size(), 5.0);
  return input;
}

TEST(FpmAkimaPartitioner, ConstantSpeedsGiveExactlyTheProportionalPartition) {
  // First decision: one point per process, constant models (k = 1).
  FpmAkimaPartitioner akima;
  const PartitionResult result = akima.partition(interval({500, 500, 500}, {2e-3, 1e-3, 1e-3}));
  EXPECT_TRUE(result.fallback.empty()) << result.fallback;
  EXPECT_EQ(result.blocks, (Decomposition{{300, 0}, {600, 300}, {600, 900}}));

  // And the same as rcp on random speeds (both round by largest remainder).
  std::mt19937 random(5);
  std::uniform_real_distribution<double> seconds(1e-4, 1e-2);
  for (int trial = 0; trial < 50; ++trial) {
    const std::size_t p = 2 + trial % 7;
    std::vector<std::int64_t> counts(p, 1000 + trial);
    std::vector<double> times(p);
    for (double& t : times) t = seconds(random);
    PartitionInput input = interval(counts, times);
    FpmAkimaPartitioner fresh;
    RcpPartitioner rcp;
    for (std::size_t i = 0; i < p; ++i) input.speed.push_back(counts[i] / times[i]);
    EXPECT_EQ(fresh.partition(input).blocks, rcp.partition(input).blocks) << "trial " << trial;
  }
}

TEST(FpmAkimaPartitioner, RowWorkModelBalancesWorkLikeRcp) {
  // nnz/weight models: sizes are block workloads, the cut follows row_work.
  PartitionInput input = interval({4, 4}, {1e-3, 1e-3});
  input.row_work = {3, 3, 3, 3, 1, 1, 1, 1};  // 12 and 4 units in the same time: 3 : 1
  input.speed = {12.0, 4.0};
  FpmAkimaPartitioner akima;
  RcpPartitioner rcp;
  const PartitionResult result = akima.partition(input);
  EXPECT_TRUE(result.fallback.empty()) << result.fallback;
  EXPECT_EQ(result.blocks, rcp.partition(input).blocks);
  EXPECT_EQ(akima.history().total(), 16.0);
}

TEST(FpmAkimaPartitioner, DegenerateInputKeepsThePartitionAndSaysWhy) {
  FpmAkimaPartitioner akima;
  for (double bad : {0.0, -1e-3, std::nan(""), HUGE_VAL}) {
    const PartitionInput input = interval({500, 500}, {1e-3, bad});
    const PartitionResult result = akima.partition(input);
    EXPECT_EQ(result.blocks, input.current);
    EXPECT_NE(result.fallback.find("process 1"), std::string::npos) << result.fallback;
    EXPECT_NE(result.fallback.find("fpm-akima"), std::string::npos) << result.fallback;
  }
  const PartitionInput one = interval({1000}, {1e-3});
  EXPECT_EQ(akima.partition(one).blocks, one.current);
  EXPECT_NE(akima.partition(one).fallback.find("one process"), std::string::npos);
  // A block without rows has no speed, and nothing to model it with yet.
  const PartitionInput empty_block = interval({0, 1000}, {1e-3, 1e-3});
  const PartitionResult result = akima.partition(empty_block);
  EXPECT_EQ(result.blocks, empty_block.current);
  EXPECT_NE(result.fallback.find("process 0"), std::string::npos) << result.fallback;
}

TEST(FpmAkimaPartitioner, IdenticalSizesMeasuredAgainMergeIntoOnePoint) {
  FpmAkimaPartitioner akima;
  const PartitionInput input = interval({500, 500}, {1e-3, 2e-3});
  const Decomposition first = akima.partition(input).blocks;
  for (int again = 0; again < 5; ++again) EXPECT_EQ(akima.partition(input).blocks, first);
  EXPECT_EQ(akima.history().points(0).size(), 1u);
  EXPECT_EQ(first, (Decomposition{{667, 0}, {333, 667}}));
}

TEST(FpmAkimaPartitioner, ASolverThatDoesNotConvergeFallsBackToBisection) {
  // One iteration is not enough for this nonlinear model: the partition
  // comes from the bisection (fpm-geometric's method) on the same history,
  // and the trace says so.
  FpmAkimaPartitioner akima(FpmAkimaPartitioner::kDefaultDenseLimit, SolverOptions{1, 1e-14});
  PartitionInput input = interval({2500, 2500}, {2500e-6, 2500e-6 / 1.5});
  for (double x = 1000.0; x <= 4000.0; x += 500.0) {  // feed the linear case's history
    PartitionInput step =
        interval({static_cast<std::int64_t>(5000 - x), static_cast<std::int64_t>(x)},
                 {(5000 - x) * 1e-6, x / (2.0 - 0.0002 * x) * 1e-6});
    akima.partition(step);
  }
  const PartitionResult result = akima.partition(input);
  EXPECT_NE(result.fallback.find("did not converge"), std::string::npos) << result.fallback;
  EXPECT_NE(result.fallback.find("bisection of the same history"), std::string::npos)
      << result.fallback;
  ASSERT_TRUE(covers_exactly(result.blocks, 5000));
  EXPECT_NEAR(result.blocks[1].count, kLinearRoot, 2.0);  // the line is piecewise linear: same root
  EXPECT_EQ(akima.last_stats().method, "bisection");
}

TEST(FpmAkimaPartitioner, ResetForgetsTheHistory) {
  FpmAkimaPartitioner akima;
  akima.partition(interval({500, 500}, {1e-3, 2e-3}));
  EXPECT_EQ(akima.history().processes(), 2u);
  akima.reset();
  EXPECT_EQ(akima.history().processes(), 0u);
  // A different number of processes starts a new history by itself.
  akima.partition(interval({500, 500}, {1e-3, 2e-3}));
  akima.partition(interval({300, 300, 400}, {1e-3, 2e-3, 1e-3}));
  EXPECT_EQ(akima.history().processes(), 3u);
  EXPECT_EQ(akima.history().points(0).size(), 1u);
}

}  // namespace
}  // namespace flexmpi
