// HPMP and AMP decisions (malleability_planner.hpp; thesis 5.4.2, 5.4.3):
// HPMP's walk over spawns and removals, AMP's plan around its search
// (amp_search.cpp) and best effort.
#include "policies/planner/malleability_planner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <utility>

#include "flexmpi/error.hpp"
#include "policies/planner/amp_search.hpp"
#include "policies/planner/planner_support.hpp"

namespace flexmpi {

using namespace planning;  // NOLINT(google-build-using-namespace)

namespace {

void validate_goal(const AmpGoal& goal) {
  if (!std::isfinite(goal.goal_seconds) || goal.goal_seconds <= 0.0) {
    invalid("AMP", fmt::format("goal_seconds: expected a finite number of seconds > 0, got {}",
                               goal.goal_seconds));
  }
  if (!std::isfinite(goal.tolerance) || goal.tolerance < 0.0 || goal.tolerance >= 1.0) {
    invalid("AMP", fmt::format("tolerance: expected a fraction in [0, 1), got {}", goal.tolerance));
  }
  if (!finite_at_least(goal.current_prediction, 0.0)) {
    invalid("AMP", fmt::format("current_prediction: expected finite seconds >= 0, got {}",
                               goal.current_prediction));
  }
  if (goal.constraint != AmpConstraint::efficiency && goal.constraint != AmpConstraint::cost &&
      goal.constraint != AmpConstraint::energy) {
    invalid("AMP", fmt::format("constraint: expected efficiency, cost or energy, got {}",
                               static_cast<int>(goal.constraint)));
  }
}

}  // namespace

bool MalleabilityDecision::changes() const {
  return std::any_of(delta.begin(), delta.end(), [](int d) { return d != 0; });
}

void to_json(nlohmann::json& json, const PlannedCandidate& candidate) {
  json = {{"delta", candidate.delta}, {"processes", candidate.processes},
          {"power", candidate.power}, {"cost", candidate.cost},
          {"watts", candidate.watts}, {"predicted_seconds", candidate.predicted_seconds},
          {"step", candidate.step}};
}

void to_json(nlohmann::json& json, const MalleabilityDecision& decision) {
  json = {{"delta", decision.delta},
          {"predicted_seconds", decision.predicted_seconds},
          {"reason", decision.reason},
          {"meets_goal", decision.meets_goal},
          {"considered", decision.considered}};
}

MalleabilityDecision plan_hpmp(std::span<const NodeClassOffer> offers,
                               const PredictRemaining& predict) {
  validate_offers(offers, "HPMP");
  check_callback(predict, "HPMP");
  const std::vector<int> free_pes = column(offers, &NodeClassOffer::free_pes);
  const std::vector<std::size_t> fastest_first =
      classes_by_speed(column(offers, &NodeClassOffer::speed), true);
  const int max_spawn = std::accumulate(free_pes.begin(), free_pes.end(), 0);

  // Alg. 7 lines 7-15: s = 0 is the current configuration (Test_P); the
  // strictly lowest prediction wins, so ties go to fewer changes. Beyond
  // Alg. 7, removing the r slowest removable processes is a candidate too:
  // with the model corrected on the counts the job ran (RunLearning), a
  // spawn that did not pay is given back (docs/design/malleability.md).
  MalleabilityDecision decision = keep(offers.size(), 0.0, "");
  int best_count = 0;
  const auto consider = [&](Counts delta, int count) {
    const double seconds = predict_and_record(offers, predict, "HPMP", delta, "hpmp", decision);
    if (count == 0 || seconds < decision.predicted_seconds) {
      decision.delta = std::move(delta);
      decision.predicted_seconds = seconds;
      best_count = count;
    }
  };
  for (int s = 0; s <= max_spawn; ++s) consider(take_in_order(free_pes, fastest_first, s), s);
  const int max_remove = total_removable(offers);
  for (int r = 1; r <= max_remove; ++r) consider(slowest_removal(offers, r), -r);
  decision.reason =
      best_count == 0 ? "hpmp: no change is predicted faster than the current configuration"
      : best_count > 0
          ? fmt::format("hpmp: spawn {} on the fastest free PEs, the minimum predicted time",
                        best_count)
          : fmt::format(
                "hpmp: remove {} of the slowest spawned processes, the minimum predicted "
                "time",
                -best_count);
  return decision;
}

namespace {

// AMP's decision when no spawn meets the goal: the fastest configuration,
// fewer processes included, if faster than now. Measured on its own count,
// a spawned configuration can be slower than fewer processes (CG on 18
// processes of 2 cores), and with the spawns alone AMP stayed on it
// (docs/design/malleability.md).
// A best effort must be predicted this much faster than staying. The
// candidates' predictions differ by the learnt corrections' noise: on
// EpiGraph's quiet first weeks, AMP with an unreachable goal spawned 2
// processes, removed them, spawned them again and so on every 4-6 intervals,
// each change predicted 1-2 % faster than staying and none measured faster.
constexpr double kBestEffortMargin = 0.05;

void take_best_effort(std::span<const NodeClassOffer> offers, const AmpGoal& goal,
                      const PredictRemaining& predict,
                      const std::optional<std::pair<Counts, double>>& fastest_spawn,
                      const std::string& band, MalleabilityDecision& decision) {
  std::optional<std::pair<Counts, double>> best_effort = fastest_spawn;
  const int max_remove = total_removable(offers);
  for (int r = 1; r <= max_remove; ++r) {
    Counts delta = slowest_removal(offers, r);
    const double seconds =
        predict_and_record(offers, predict, "AMP", delta, "best effort removal", decision);
    if (!best_effort || seconds < best_effort->second)
      best_effort.emplace(std::move(delta), seconds);
  }
  if (best_effort && best_effort->second < goal.current_prediction * (1.0 - kBestEffortMargin)) {
    decision.delta = best_effort->first;
    decision.predicted_seconds = best_effort->second;
    decision.reason = fmt::format(
        "cannot meet the goal: no spawn is predicted within the {}; best effort: the fastest, "
        "delta {}, predicted {:.6g} s",
        band, decision.delta, decision.predicted_seconds);
  } else if (!fastest_spawn) {
    decision.reason =
        fmt::format("cannot meet the goal: predicted {:.6g} s, above the {}, no free PE",
                    goal.current_prediction, band);
  } else {
    decision.reason = fmt::format(
        "cannot meet the goal: no spawn is predicted within the {} nor {:.0f} % faster than "
        "now, {:.6g} s",
        band, 100 * kBestEffortMargin, goal.current_prediction);
  }
}

}  // namespace

MalleabilityDecision plan_amp(std::span<const NodeClassOffer> offers, const AmpGoal& goal,
                              const PredictRemaining& predict) {
  validate_offers(offers, "AMP");
  validate_goal(goal);
  check_callback(predict, "AMP");
  const double lower = goal.goal_seconds * (1.0 - goal.tolerance);
  const double upper = goal.goal_seconds * (1.0 + goal.tolerance);
  const std::string band = fmt::format("goal band [{:.6g}, {:.6g}] s", lower, upper);

  // Alg. 8 line 5 as the text means it: reconfigure only when the prediction
  // misses the band (the pseudocode's "|Test_P - T_goal| < tol" is inverted).
  if (goal.current_prediction >= lower && goal.current_prediction <= upper) {
    return keep(offers.size(), goal.current_prediction,
                fmt::format("within {}: predicted {:.6g} s", band, goal.current_prediction));
  }
  const bool spawn = goal.current_prediction > upper;
  MalleabilityDecision decision = keep(offers.size(), goal.current_prediction, "");
  AmpSearch search(offers, goal, predict, spawn, decision);
  const int bound = search.total_bound();
  // Where a change lands. What the model leaves out (a slow interval, the
  // next change's settling) makes the rest of the run later far more often
  // than earlier, and changes that landed at the band's upper edge finished
  // every emulated-cluster run late (docs/design/malleability.md): a change aims at
  // the lower edge; a spawn at the upper edge only when nothing reaches the
  // lower one (a removal then keeps the processes).
  search.aim_at(lower);
  const auto best = [&]() -> std::optional<AmpSearch::Configuration> {
    if (!spawn) return search.find_best(0, bound - 1);  // keep 0..all but one removable
    // spawn 1..all free PEs
    if (auto at_lower_edge = search.find_best(1, bound)) return at_lower_edge;
    // The most power of every count was evaluated: if none of them is within
    // the upper edge, no configuration is.
    const auto& fastest = search.fastest_seen();
    if (!fastest || fastest->predicted_seconds > upper) return std::nullopt;
    search.aim_at(upper);
    return search.find_best(1, bound);
  }();
  if (best) {
    decision.delta = search.delta(best->x);
    decision.predicted_seconds = best->predicted_seconds;
    decision.reason = fmt::format("{}: {} IP optimum, delta {}, predicted {:.6g} s ({})",
                                  spawn ? "spawn" : "remove", to_string(goal.constraint),
                                  decision.delta, best->predicted_seconds, band);
    return decision;
  }
  if (!spawn) {
    decision.reason =
        bound == 0 ? fmt::format("faster than the {}, but no process is removable", band)
                   : fmt::format("faster than the {}, but every removal misses the goal", band);
    return decision;
  }
  decision.meets_goal = false;
  std::optional<std::pair<Counts, double>> fastest_spawn;
  if (const auto& fastest = search.fastest_seen()) {
    fastest_spawn.emplace(search.delta(fastest->x), fastest->predicted_seconds);
  }
  take_best_effort(offers, goal, predict, fastest_spawn, band, decision);
  return decision;
}

}  // namespace flexmpi
