// The decision logic of HPMP (thesis 5.4.2, Alg. 7) and AMP (5.4.3, Alg. 8,
// the integer programs of 5.4.3.1): HPMP takes the minimum of the predicted
// curve; AMP's GLPK programs agree with brute force over every integer point,
// keeps inside the goal band, never throws for an unreachable goal and
// names every invalid argument. Predictions are synthetic and deterministic:
// T = work / (total computing power) + overhead x processes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "flexmpi/error.hpp"
#include "policies/amp/amp_planner.hpp"
#include "policies/amp/integer_program.hpp"
#include "policies/hpmp/hpmp_planner.hpp"

namespace flexmpi {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

double weighted(const std::vector<int>& delta, const std::vector<NodeClassOffer>& offers,
                double NodeClassOffer::*field) {
  double total = 0.0;
  for (std::size_t c = 0; c < delta.size(); ++c) total += delta[c] * (offers[c].*field);
  return total;
}

// Remaining time of the run after the change: the work spread over the power
// of every process, plus a cost per process (communication, creation).
struct SyntheticRun {
  std::vector<NodeClassOffer> offers;
  double work = 100.0;
  double overhead_per_process = 0.0;

  double operator()(const std::vector<int>& delta) const {
    double power = 0.0;
    int processes = 0;
    for (std::size_t c = 0; c < offers.size(); ++c) {
      const int n = offers[c].running + delta[c];
      power += n * offers[c].speed;
      processes += n;
    }
    return work / power + overhead_per_process * processes;
  }
};

NodeClassOffer offer(std::string name, double speed, int free_pes, int running = 0,
                     int removable = 0, double cost = 0.0, double watts = 0.0) {
  return NodeClassOffer{std::move(name), speed, cost, watts, free_pes, running, removable};
}

// A prediction read from a curve indexed by the processes added.
PredictRemaining scripted(std::vector<double> curve) {
  return [curve = std::move(curve)](const std::vector<int>& delta) {
    return curve.at(static_cast<std::size_t>(sum(delta)));
  };
}

// ---- HPMP (Alg. 7) -------------------------------------------------------------

TEST(Hpmp, TakesTheMinimumInTheMiddleOfTheCurveOnTheFastestClasses) {
  const std::vector<NodeClassOffer> offers{offer("slow", 0.5, 2), offer("fast", 2.0, 2),
                                           offer("mid", 1.0, 2)};
  const MalleabilityDecision d = plan_hpmp(offers, scripted({10, 8, 6, 5, 5.5, 7, 9}));
  EXPECT_EQ(d.delta, (std::vector<int>{0, 2, 1}));  // fast first, then mid
  EXPECT_DOUBLE_EQ(d.predicted_seconds, 5.0);
  EXPECT_THAT(d.reason, HasSubstr("spawn 3"));
  ASSERT_EQ(d.considered.size(), 7u);  // s = 0..6, each recorded
  for (int s = 0; s <= 6; ++s) {
    EXPECT_EQ(d.considered[static_cast<std::size_t>(s)].processes, s);
  }
  EXPECT_EQ(d.considered[1].delta, (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(d.considered[5].delta, (std::vector<int>{1, 2, 2}));
  EXPECT_DOUBLE_EQ(d.considered[4].predicted_seconds, 5.5);
}

TEST(Hpmp, TiesGoToFewerProcesses) {
  const std::vector<NodeClassOffer> offers{offer("a", 1.0, 4)};
  const MalleabilityDecision d = plan_hpmp(offers, scripted({10, 7, 7, 9, 7}));
  EXPECT_EQ(d.delta, (std::vector<int>{1}));
  const MalleabilityDecision flat = plan_hpmp(offers, scripted({4, 4, 4, 4, 4}));
  EXPECT_FALSE(flat.changes());
}

TEST(Hpmp, KeepsWhenNoSpawnIsFasterAndSpawnsAllWhenTheCurveOnlyFalls) {
  const std::vector<NodeClassOffer> offers{offer("a", 1.0, 1), offer("b", 1.0, 2)};
  const MalleabilityDecision rising = plan_hpmp(offers, scripted({3, 4, 5, 6}));
  EXPECT_FALSE(rising.changes());
  EXPECT_THAT(rising.reason, HasSubstr("no change"));
  const MalleabilityDecision falling = plan_hpmp(offers, scripted({6, 5, 4, 3}));
  EXPECT_EQ(falling.delta, (std::vector<int>{1, 2}));  // equal speeds: class order
}

TEST(Hpmp, GivesBackTheSlowestSpawnedProcessesWhenFewerArePredictedFaster) {
  // 100 / power + 1 x processes: 12 processes of power 16 take 18.25; without
  // the 4 removable slow ones 16.33, the least (one fast one more gone: 17).
  const SyntheticRun run{{offer("fast", 2.0, 0, 4, 2), offer("slow", 1.0, 0, 8, 4)}, 100.0, 1.0};
  const MalleabilityDecision d = plan_hpmp(run.offers, std::cref(run));
  EXPECT_EQ(d.delta, (std::vector<int>{0, -4}));
  EXPECT_NEAR(d.predicted_seconds, 100.0 / 12 + 8, 1e-12);
  EXPECT_THAT(d.reason, HasSubstr("remove 4 of the slowest"));
  EXPECT_EQ(d.considered.size(), 7u);  // keep, then r = 1..6
  // Nothing is removed when keeping them all is predicted fastest.
  const SyntheticRun cheap{{offer("fast", 2.0, 0, 4, 2), offer("slow", 1.0, 0, 8, 4)}, 100.0, 0.0};
  EXPECT_FALSE(plan_hpmp(cheap.offers, std::cref(cheap)).changes());
}

TEST(Hpmp, MinimumOfTheSyntheticRun) {
  // 100 / (2 + s) + 1 x (2 + s) is least at 2 + s = 10.
  SyntheticRun run{{offer("a", 1.0, 12, 2)}, 100.0, 1.0};
  const MalleabilityDecision d = plan_hpmp(run.offers, std::cref(run));
  EXPECT_EQ(d.delta, (std::vector<int>{8}));
  EXPECT_DOUBLE_EQ(d.predicted_seconds, 20.0);
}

// ---- AMP: band (Alg. 8 line 5) ----------------------------------------------------

struct CountingPrediction {
  SyntheticRun run;
  int calls = 0;
  double operator()(const std::vector<int>& delta) {
    ++calls;
    return run(delta);
  }
};

TEST(AmpBand, InsideTheBandKeepsWithoutPredicting) {
  // The pseudocode's "|Test_P - T_goal| < tol" would reconfigure here; the text does not.
  CountingPrediction prediction{{{offer("a", 1.0, 6, 4, 3)}, 100.0, 0.0}};
  for (const double current : {99.0, 99.5, 100.0, 100.5, 101.0}) {
    SCOPED_TRACE(current);
    const MalleabilityDecision d =
        plan_amp(prediction.run.offers, AmpGoal{100.0, 0.01, AmpConstraint::efficiency, current},
                 std::ref(prediction));
    EXPECT_FALSE(d.changes());
    EXPECT_TRUE(d.meets_goal);
    EXPECT_DOUBLE_EQ(d.predicted_seconds, current);
    EXPECT_THAT(d.reason, StartsWith("within goal band"));
    EXPECT_TRUE(d.considered.empty());
  }
  EXPECT_EQ(prediction.calls, 0);
}

TEST(AmpBand, JustOutsideTheBandReconfigures) {
  // 4 processes of speed 1 now: 100 / 4 = 25 s. One more gives 20 s, one fewer 33.3 s.
  const SyntheticRun run{{offer("a", 1.0, 6, 4, 3)}, 100.0, 0.0};
  const MalleabilityDecision slower =
      plan_amp(run.offers, AmpGoal{20.0, 0.01, AmpConstraint::efficiency, 20.0 * 1.01 + 1e-9}, run);
  // A spawn aims at the band's lower edge, 19.8 s: one more (20 s) does not
  // reach it, two more (16.7 s) do.
  EXPECT_EQ(slower.delta, (std::vector<int>{2}));
  EXPECT_THAT(slower.reason, StartsWith("spawn: efficiency IP optimum"));
  // With one free PE only, the band's upper edge (20.2 s) is enough.
  const SyntheticRun one_free{{offer("a", 1.0, 1, 4, 3)}, 100.0, 0.0};
  const MalleabilityDecision upper_edge =
      plan_amp(one_free.offers, AmpGoal{20.0, 0.01, AmpConstraint::efficiency, 20.0 * 1.01 + 1e-9},
               one_free);
  EXPECT_EQ(upper_edge.delta, (std::vector<int>{1}));
  EXPECT_TRUE(upper_edge.meets_goal);

  const MalleabilityDecision faster =
      plan_amp(run.offers, AmpGoal{34.0, 0.01, AmpConstraint::efficiency, 34.0 * 0.99 - 1e-9}, run);
  EXPECT_EQ(faster.delta, (std::vector<int>{-1}));  // 33.3 s <= 33.66 s; -2 gives 50 s
  EXPECT_THAT(faster.reason, StartsWith("remove: efficiency IP optimum"));
  EXPECT_NEAR(faster.predicted_seconds, 100.0 / 3, 1e-12);
}

TEST(AmpBand, ZeroToleranceIsAPoint) {
  const SyntheticRun run{{offer("a", 1.0, 6, 4, 3)}, 100.0, 0.0};
  EXPECT_FALSE(plan_amp(run.offers, AmpGoal{25.0, 0.0, AmpConstraint::cost, 25.0}, run).changes());
  EXPECT_TRUE(plan_amp(run.offers, AmpGoal{20.0, 0.0, AmpConstraint::cost, 25.0}, run).changes());
}

// ---- AMP: the constraints choose different PEs (5.4.3.1) --------------------------

TEST(AmpConstraints, EachConstraintPicksItsOwnOptimum) {
  // Now 100 / 2 = 50 s; the goal 30 s (30.3 s with the tolerance) needs
  // 100 / 30.3 - 2 = 1.3 more power: 1 fast PE, 2 cheap ones or 3 frugal ones.
  const std::vector<NodeClassOffer> offers{
      offer("fast", 2.0, 2, 1, 0, /*cost=*/3.0, /*watts=*/40.0),
      offer("cheap", 1.0, 3, 0, 0, /*cost=*/1.0, /*watts=*/30.0),
      offer("frugal", 0.5, 4, 0, 0, /*cost=*/1.5, /*watts=*/5.0)};
  const SyntheticRun run{offers, 100.0, 0.0};
  const auto plan = [&](AmpConstraint constraint) {
    return plan_amp(offers, AmpGoal{30.0, 0.01, constraint, run({0, 0, 0})}, run);
  };
  EXPECT_EQ(plan(AmpConstraint::efficiency).delta, (std::vector<int>{1, 0, 0}));  // 1 process
  EXPECT_EQ(plan(AmpConstraint::cost).delta, (std::vector<int>{0, 2, 0}));        // cost 2
  EXPECT_EQ(plan(AmpConstraint::energy).delta, (std::vector<int>{0, 0, 3}));      // 15 W
}

// ---- AMP against brute force over every integer point -----------------------------

// Calls visit(x) for every x in [0, bounds_0] x ... x [0, bounds_n-1].
void for_each_point(const std::vector<int>& bounds,
                    const std::function<void(const std::vector<int>&)>& visit) {
  std::vector<int> x(bounds.size(), 0);
  while (true) {
    visit(x);
    std::size_t c = 0;
    while (c < x.size() && x[c] == bounds[c]) x[c++] = 0;
    if (c == x.size()) return;
    ++x[c];
  }
}

// The brute-force choice: every change of the direction that meets the goal,
// ranked as the thesis ranks them (5.4.3.1; efficiency ties: the power
// closest to the need).
struct BruteForce {
  bool found = false;
  int processes = 0;  // added or removed
  double power = 0.0;
  double objective = 0.0;
};

// A change meets the goal when it is predicted within `target` seconds.
BruteForce brute_force(const SyntheticRun& run, const AmpGoal& goal, bool spawn, double target) {
  std::vector<int> bounds;
  for (const NodeClassOffer& o : run.offers) bounds.push_back(spawn ? o.free_pes : o.removable);
  BruteForce best;
  for_each_point(bounds, [&](const std::vector<int>& x) {
    if (sum(x) == 0) return;
    std::vector<int> delta = x;
    if (!spawn) {
      for (int& d : delta) d = -d;
    }
    if (run(delta) > target) return;
    BruteForce c{true, sum(x), weighted(x, run.offers, &NodeClassOffer::speed), 0.0};
    // Spawn: least objective, then fewest processes. Removal: most removed.
    if (goal.constraint == AmpConstraint::cost)
      c.objective = weighted(x, run.offers, &NodeClassOffer::cost);
    if (goal.constraint == AmpConstraint::energy)
      c.objective = weighted(x, run.offers, &NodeClassOffer::watts);
    const double sign = spawn ? 1.0 : -1.0;
    bool better = false;
    if (!best.found) {
      better = true;
    } else if (goal.constraint == AmpConstraint::efficiency) {
      better = sign * c.processes < sign * best.processes ||
               (c.processes == best.processes && sign * c.power < sign * best.power);
    } else {
      const double tie = 1e-9 * (1.0 + std::abs(best.objective));
      better = sign * c.objective < sign * best.objective - tie ||
               (std::abs(c.objective - best.objective) <= tie &&
                sign * c.processes < sign * best.processes);
    }
    if (better) best = c;
  });
  return best;
}

SyntheticRun random_run(std::mt19937& random) {
  const double speeds[] = {0.5, 1.0, 1.5, 2.0, 3.0};
  const double costs[] = {0.0, 0.5, 1.0, 2.0, 3.5};
  const double watts[] = {10.0, 20.0, 35.0, 50.0, 80.0};
  const double overheads[] = {0.0, 0.05, 0.5};
  const auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(random); };
  SyntheticRun run;
  const int classes = 2 + pick(3);
  for (int c = 0; c < classes; ++c) {
    const int running = pick(4);
    run.offers.push_back(offer("C" + std::to_string(c), speeds[pick(5)], pick(7), running,
                               running == 0 ? 0 : pick(running + 1), costs[pick(5)],
                               watts[pick(5)]));
  }
  // The initial process is never removable: the job keeps running somewhere.
  run.offers[0].running = std::max(run.offers[0].running, run.offers[0].removable + 1);
  run.overhead_per_process = overheads[pick(3)];
  return run;
}

std::string describe(int instance, const SyntheticRun& run, const AmpGoal& goal) {
  nlohmann::json offers = nlohmann::json::array();
  for (const NodeClassOffer& o : run.offers) {
    offers.push_back({o.speed, o.cost, o.watts, o.free_pes, o.running, o.removable});
  }
  return (nlohmann::json{{"instance", instance},
                         {"speed, cost, watts, free, running, removable", offers},
                         {"overhead", run.overhead_per_process},
                         {"goal", goal.goal_seconds}})
      .dump();
}

class AmpBruteForce : public ::testing::TestWithParam<AmpConstraint> {};

TEST_P(AmpBruteForce, SpawnMatchesEveryIntegerPoint) {
  std::mt19937 random(20150 + static_cast<unsigned>(GetParam()));
  int met = 0;
  int missed = 0;
  for (int instance = 0; instance < 150; ++instance) {
    const SyntheticRun run = random_run(random);
    const double now = run(std::vector<int>(run.offers.size(), 0));
    const double factor = std::uniform_real_distribution<double>(0.2, 0.97)(random);
    const AmpGoal goal{now * factor, 0.01, GetParam(), now};
    SCOPED_TRACE(describe(instance, run, goal));
    const MalleabilityDecision d = plan_amp(run.offers, goal, run);
    // The band's lower edge first, its upper edge when no spawn reaches the lower.
    BruteForce expected = brute_force(run, goal, true, goal.goal_seconds * 0.99);
    if (!expected.found) expected = brute_force(run, goal, true, goal.goal_seconds * 1.01);
    EXPECT_DOUBLE_EQ(d.predicted_seconds, d.changes() ? run(d.delta) : now);
    if (!expected.found) {
      ++missed;
      EXPECT_FALSE(d.meets_goal);
      EXPECT_THAT(d.reason, StartsWith("cannot meet the goal"));
      continue;
    }
    ++met;
    ASSERT_TRUE(d.meets_goal) << d.reason;
    EXPECT_LE(run(d.delta), goal.goal_seconds * 1.01);
    for (const int x : d.delta) EXPECT_GE(x, 0);
    for (std::size_t c = 0; c < d.delta.size(); ++c) EXPECT_LE(d.delta[c], run.offers[c].free_pes);
    EXPECT_EQ(sum(d.delta), expected.processes);
    if (GetParam() == AmpConstraint::efficiency) {
      EXPECT_NEAR(weighted(d.delta, run.offers, &NodeClassOffer::speed), expected.power, 1e-9);
    } else {
      const double objective = weighted(
          d.delta, run.offers,
          GetParam() == AmpConstraint::cost ? &NodeClassOffer::cost : &NodeClassOffer::watts);
      EXPECT_NEAR(objective, expected.objective, 1e-9);
    }
  }
  EXPECT_GT(met, 20);  // the instances exercise both outcomes
  EXPECT_GT(missed, 5);
}

TEST_P(AmpBruteForce, RemovalMatchesEveryIntegerPoint) {
  std::mt19937 random(51 + static_cast<unsigned>(GetParam()));
  int removed = 0;
  for (int instance = 0; instance < 150; ++instance) {
    const SyntheticRun run = random_run(random);
    const double now = run(std::vector<int>(run.offers.size(), 0));
    const double factor = std::uniform_real_distribution<double>(1.02, 2.5)(random);
    const AmpGoal goal{now * factor, 0.01, GetParam(), now};
    SCOPED_TRACE(describe(instance, run, goal));
    const MalleabilityDecision d = plan_amp(run.offers, goal, run);
    const BruteForce expected = brute_force(run, goal, false, goal.goal_seconds * 0.99);
    EXPECT_TRUE(d.meets_goal);
    if (!expected.found) {
      EXPECT_FALSE(d.changes()) << d.reason;
      EXPECT_THAT(d.reason, StartsWith("faster than the goal band"));
      continue;
    }
    ++removed;
    std::vector<int> r = d.delta;
    for (int& x : r) x = -x;
    for (std::size_t c = 0; c < r.size(); ++c) {
      EXPECT_GE(r[c], 0);
      EXPECT_LE(r[c], run.offers[c].removable);
    }
    EXPECT_LE(run(d.delta), goal.goal_seconds * 1.01);
    EXPECT_DOUBLE_EQ(d.predicted_seconds, run(d.delta));
    EXPECT_EQ(sum(r), expected.processes);
    if (GetParam() == AmpConstraint::efficiency) {
      EXPECT_NEAR(weighted(r, run.offers, &NodeClassOffer::speed), expected.power, 1e-9);
    } else {
      const double objective = weighted(
          r, run.offers,
          GetParam() == AmpConstraint::cost ? &NodeClassOffer::cost : &NodeClassOffer::watts);
      EXPECT_NEAR(objective, expected.objective, 1e-9);
    }
  }
  EXPECT_GT(removed, 20);
}

INSTANTIATE_TEST_SUITE_P(EveryConstraint, AmpBruteForce,
                         ::testing::Values(AmpConstraint::efficiency, AmpConstraint::cost,
                                           AmpConstraint::energy),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// Above 10^5 integer points the program rounds its relaxation: the result
// must hold k processes within the bounds, reach the power, and cost no more
// than the relaxation's optimum plus one process's objective.
TEST(AmpProgram, LargeProgramsRoundTheRelaxationWithinOneProcess) {
  const std::vector<double> speeds = {1.0, 1.125, 1.25, 1.375, 1.5, 1.625, 1.75, 1.875};
  const std::vector<double> cost = {0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4};
  const std::vector<int> bounds(8, 300);  // 301^8 points
  for (const auto& objective : {speeds, cost}) {
    for (const double power : {600.0, 701.3, 999.99}) {
      const int count = 600;
      const std::optional<std::vector<int>> x =
          planning::IntegerProgram(objective, speeds, bounds).solve(count, power);
      ASSERT_TRUE(x.has_value()) << power;
      double have = 0.0, spent = 0.0;
      int processes = 0;
      for (std::size_t c = 0; c < x->size(); ++c) {
        EXPECT_GE((*x)[c], 0);
        EXPECT_LE((*x)[c], bounds[c]);
        processes += (*x)[c];
        have += (*x)[c] * speeds[c];
        spent += (*x)[c] * objective[c];
      }
      EXPECT_EQ(processes, count);
      EXPECT_GE(have, power);
      // The relaxation's optimum: the cheapest mix of two classes reaching the power.
      double relaxed = std::numeric_limits<double>::infinity();
      for (std::size_t a = 0; a < 8; ++a) {
        for (std::size_t b = 0; b < 8; ++b) {
          if (speeds[a] == speeds[b]) continue;
          const double share = (power - count * speeds[b]) / (count * (speeds[a] - speeds[b]));
          if (share < 0.0 || share > 1.0 || share * count > bounds[a] ||
              (1 - share) * count > bounds[b]) {
            continue;
          }
          relaxed = std::min(relaxed, count * (share * objective[a] + (1 - share) * objective[b]));
        }
      }
      EXPECT_LE(spent, relaxed + (objective.back() - objective.front()) + 1e-9) << power;
    }
  }
  // More power than the bounds allow: no point.
  EXPECT_FALSE(planning::IntegerProgram(cost, speeds, bounds).solve(600, 2000.0).has_value());
}

TEST(AmpRobustness, AChosenChangeMeetsTheGoalEvenWhenPowerIsNotEverything) {
  // The search assumes more power at a fixed count is never slower; a
  // prediction that breaks it (here +-15 % noise per configuration) may cost
  // the optimum, never a change predicted to miss the goal.
  std::mt19937 random(7);
  for (int instance = 0; instance < 300; ++instance) {
    const SyntheticRun run = random_run(random);
    const PredictRemaining noisy = [&run](const std::vector<int>& delta) {
      unsigned hash = 2166136261u;
      for (const int d : delta) hash = (hash ^ static_cast<unsigned>(d + 64)) * 16777619u;
      return run(delta) * (0.85 + 0.3 * (hash % 1000) / 1000.0);
    };
    const double now = noisy(std::vector<int>(run.offers.size(), 0));
    const double factor = std::uniform_real_distribution<double>(0.3, 2.0)(random);
    const AmpConstraint constraint = static_cast<AmpConstraint>(instance % 3);
    const AmpGoal goal{now * factor, 0.01, constraint, now};
    SCOPED_TRACE(describe(instance, run, goal));
    const MalleabilityDecision d = plan_amp(run.offers, goal, noisy);
    if (d.meets_goal && d.changes()) {
      EXPECT_LE(noisy(d.delta), goal.goal_seconds * 1.01);
      EXPECT_DOUBLE_EQ(d.predicted_seconds, noisy(d.delta));
    }
  }
}

// ---- AMP: unreachable goals ------------------------------------------------------

TEST(AmpInfeasible, UnreachableGoalIsADecisionWithTheFastestPrediction) {
  // 100 / (1 + s) + 2 (1 + s): least at 1 + s = 7 (28.3 s), far from 5 s.
  const SyntheticRun run{{offer("a", 1.0, 10, 1, 0)}, 100.0, 2.0};
  const MalleabilityDecision d =
      plan_amp(run.offers, AmpGoal{5.0, 0.01, AmpConstraint::cost, run({0})}, run);
  EXPECT_FALSE(d.meets_goal);
  EXPECT_THAT(d.reason, StartsWith("cannot meet the goal"));
  EXPECT_EQ(d.delta, (std::vector<int>{6}));
  EXPECT_DOUBLE_EQ(d.predicted_seconds, run({6}));
  EXPECT_EQ(d.considered.size(), 10u);  // the most-power configuration of every count
}

TEST(AmpInfeasible, TheBestEffortMayBeFewerProcesses) {
  // 100 / n + 4 n on 9 processes (1 initial + 8 spawned) is 47.1 s; the least
  // is 5 processes (40 s): the goal of 5 s is out of reach, and removing
  // the 4 slowest is the fastest configuration.
  const SyntheticRun run{{offer("slow", 1.0, 0, 4, 4), offer("fast", 1.0, 1, 5, 4)}, 100.0, 4.0};
  const MalleabilityDecision d =
      plan_amp(run.offers, AmpGoal{5.0, 0.01, AmpConstraint::efficiency, run({0, 0})}, run);
  EXPECT_FALSE(d.meets_goal);
  EXPECT_THAT(d.reason, StartsWith("cannot meet the goal"));
  EXPECT_EQ(d.delta, (std::vector<int>{-4, 0}));  // equal speeds: class order
  EXPECT_DOUBLE_EQ(d.predicted_seconds, run({-4, 0}));
}

TEST(AmpInfeasible, ABestEffortMustBeFivePercentFasterThanStaying) {
  // 100 / n + 2 n on 9 processes is 29.1 s, on 7 (the fastest) 28.3 s: 2.7 %
  // faster, within the predictions' noise, so the processes stay.
  const SyntheticRun run{{offer("slow", 1.0, 0, 4, 4), offer("fast", 1.0, 1, 5, 4)}, 100.0, 2.0};
  const MalleabilityDecision d =
      plan_amp(run.offers, AmpGoal{5.0, 0.01, AmpConstraint::efficiency, run({0, 0})}, run);
  EXPECT_FALSE(d.meets_goal);
  EXPECT_FALSE(d.changes());
  EXPECT_THAT(d.reason, HasSubstr("nor 5 % faster than now"));
}

TEST(AmpInfeasible, NoFreePeKeepsAndSaysWhy) {
  const SyntheticRun run{{offer("a", 1.0, 0, 2, 1), offer("b", 2.0, 0, 0, 0)}, 100.0, 0.0};
  const MalleabilityDecision d =
      plan_amp(run.offers, AmpGoal{10.0, 0.01, AmpConstraint::efficiency, 50.0}, run);
  EXPECT_FALSE(d.changes());
  EXPECT_FALSE(d.meets_goal);
  EXPECT_THAT(d.reason, StartsWith("cannot meet the goal"));
  EXPECT_THAT(d.reason, HasSubstr("no free PE"));
}

TEST(AmpInfeasible, TooFastWithNothingRemovableKeeps) {
  const SyntheticRun run{{offer("a", 1.0, 3, 2, 0)}, 100.0, 0.0};
  const MalleabilityDecision d =
      plan_amp(run.offers, AmpGoal{500.0, 0.01, AmpConstraint::energy, 50.0}, run);
  EXPECT_FALSE(d.changes());
  EXPECT_TRUE(d.meets_goal);
  EXPECT_THAT(d.reason, HasSubstr("no process is removable"));
}

// ---- trace and silence -------------------------------------------------------------

TEST(MalleabilityDecisionJson, CarriesTheChoiceAndEveryPrediction) {
  const SyntheticRun run{
      {offer("a", 2.0, 3, 1, 0, 1.5, 20.0), offer("b", 1.0, 3, 1, 0)}, 90.0, 0.0};
  ::testing::internal::CaptureStdout();
  const MalleabilityDecision d =
      plan_amp(run.offers, AmpGoal{12.0, 0.01, AmpConstraint::cost, run({0, 0})}, run);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");  // GLPK prints nothing
  const nlohmann::json json = d;
  EXPECT_EQ(json.at("delta"), nlohmann::json(d.delta));
  EXPECT_EQ(json.at("reason"), d.reason);
  EXPECT_EQ(json.at("meets_goal"), true);
  ASSERT_EQ(json.at("considered").size(), d.considered.size());
  const nlohmann::json& first = json.at("considered").at(0);
  for (const char* key :
       {"delta", "processes", "power", "cost", "watts", "predicted_seconds", "step"}) {
    EXPECT_TRUE(first.contains(key)) << key;
  }
  EXPECT_EQ(first.at("step"), "most power");
}

// ---- invalid input ------------------------------------------------------------------

void expect_invalid(const std::function<void()>& call, const std::string& argument) {
  SCOPED_TRACE(argument);
  try {
    call();
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr(argument));
    EXPECT_THAT(e.what(), HasSubstr("expected"));
  }
}

TEST(MalleabilityPlannerInput, BadGoalsAreRefusedNamingTheArgument) {
  const SyntheticRun run{{offer("a", 1.0, 2, 2, 1)}, 100.0, 0.0};
  const auto amp = [&](AmpGoal goal) {
    return [&run, goal] { (void)plan_amp(run.offers, goal, run); };
  };
  const AmpConstraint e = AmpConstraint::efficiency;
  expect_invalid(amp({0.0, 0.01, e, 50.0}), "goal_seconds");
  expect_invalid(amp({-3.0, 0.01, e, 50.0}), "goal_seconds");
  expect_invalid(amp({kNaN, 0.01, e, 50.0}), "goal_seconds");
  expect_invalid(amp({10.0, -0.01, e, 50.0}), "tolerance");
  expect_invalid(amp({10.0, 1.0, e, 50.0}), "tolerance");
  expect_invalid(amp({10.0, kNaN, e, 50.0}), "tolerance");
  expect_invalid(amp({10.0, 0.01, e, -1.0}), "current_prediction");
  expect_invalid(amp({10.0, 0.01, e, kNaN}), "current_prediction");
  expect_invalid(amp({10.0, 0.01, static_cast<AmpConstraint>(7), 50.0}), "constraint");
}

TEST(MalleabilityPlannerInput, BadOffersAreRefusedNamingTheField) {
  const PredictRemaining constant = [](const std::vector<int>&) { return 1.0; };
  const std::pair<NodeClassOffer, const char*> cases[] = {
      {offer("x", 0.0, 1), "offers[1] ('x').speed"},
      {offer("x", -1.0, 1), ".speed"},
      {offer("x", kNaN, 1), ".speed"},
      {offer("x", 1.0, 1, 0, 0, -1.0), ".cost"},
      {offer("x", 1.0, 1, 0, 0, kNaN), ".cost"},
      {offer("x", 1.0, 1, 0, 0, 0.0, -5.0), ".watts"},
      {offer("x", 1.0, -1), ".free_pes"},
      {offer("x", 1.0, 1, -2), ".running"},
      {offer("x", 1.0, 1, 1, -1), ".removable"},
      {offer("x", 1.0, 1, 1, 2), ".removable"},
  };
  for (const auto& [bad, field] : cases) {
    const std::vector<NodeClassOffer> offers{offer("ok", 1.0, 1, 1, 1), bad};
    expect_invalid([&] { (void)plan_hpmp(offers, constant); }, field);
    expect_invalid(
        [&] {
          (void)plan_amp(offers, AmpGoal{1.0, 0.01, AmpConstraint::cost, 9.0}, constant);
        },
        field);
  }
}

TEST(MalleabilityPlannerInput, BadCallbacksAreRefused) {
  const std::vector<NodeClassOffer> offers{offer("a", 1.0, 2, 1, 0)};
  const AmpGoal goal{1.0, 0.01, AmpConstraint::efficiency, 9.0};
  expect_invalid([&] { (void)plan_hpmp(offers, PredictRemaining{}); }, "predict");
  expect_invalid([&] { (void)plan_amp(offers, goal, PredictRemaining{}); }, "predict");
  const PredictRemaining nan = [](const std::vector<int>&) { return kNaN; };
  const PredictRemaining negative = [](const std::vector<int>&) { return -1.0; };
  expect_invalid([&] { (void)plan_hpmp(offers, nan); }, "predict");
  expect_invalid([&] { (void)plan_amp(offers, goal, negative); }, "predict");
}

}  // namespace
}  // namespace flexmpi
