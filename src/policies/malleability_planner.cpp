// HPMP and AMP decisions (malleability_planner.hpp; thesis 5.4.2, 5.4.3).
//
// AMP's search, and why. Alg. 8 (lines 10-17, 20-27) walks every process
// count, asks the model (CPMreconfig) for the computing power (delta FLOPS)
// that count needs to meet the goal, lets mappingSimplex pick PEs of that
// power under the constraint (5.4.3.1), predicts the result again (line 13)
// and keeps it if it meets the goal; line 30 selects among the counts. The
// planner does the same with only the prediction callback, which prices
// configurations, not powers. It assumes that, for a fixed number of
// processes, more computing power never predicts a slower run (computation
// is work over power, eq. 5.3; communication and process creation depend on
// the count, 5.3.2-5.3.3): the configurations of k processes that meet the
// goal are then those of power >= some P(k), the power that count needs.
//
//  * Count k: the k PEs of the fastest classes have the most power; if they
//    miss, no configuration of k processes meets.
//  * Needed power and program (5.4.3.1, eq. 5.15): minimise sum_c x_c obj_c
//    subject to sum_c x_c = k, sum_c x_c speed_c >= P, 0 <= x_c <= bound_c,
//    x integer (GLPK's branch and bound), with obj = cost (cost), watts
//    (energy) or speed (efficiency: the power closest to the need, "the PE
//    set whose computational power is closer to delta FLOPS", 5.4.3.2). P
//    starts below every power and rises only past powers predicted to miss,
//    so P <= P(k) throughout and an optimum that meets the goal is the
//    optimum of all that meet. A miss raises P to its power; a probe halfway
//    to a power known to suffice halves the range (a bisection for P(k)).
//    Every configuration chosen was predicted to meet the goal: if the
//    assumption fails, it still meets, though it may not be the optimum.
//  * Selection (line 30): efficiency takes the first count that meets the
//    goal (the fewest processes); cost and energy the least objective over
//    all counts, ties to the first count. "Meets" is predicted <= a target:
//    for a spawn the band's lower edge goal x (1 - tolerance), or, when no
//    configuration reaches it, its upper edge goal x (1 + tolerance) (a
//    configuration in the band is one AMP would keep); for a removal the
//    lower edge. (Not the thesis's: why, in plan_amp.)
//
// Removal is the mirror program over the processes *kept* among the
// removable ones, y_c = removable_c - r_c: maximising the processes, cost or
// watts removed is minimising those kept, and the remaining power is bounded
// from below by a bound on the kept power, so both directions share one
// program and one search. Fewer processes kept comes first: the most removed.
#include "policies/malleability_planner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <numeric>
#include <optional>
#include <utility>

#include "flexmpi/error.hpp"

namespace flexmpi {

namespace {

using Counts = std::vector<int>;

// Objectives within this relative distance are ties (they differ by rounding only).
constexpr double kTieTolerance = 1e-9;

[[noreturn]] void invalid(std::string_view policy, const std::string& message) {
  throw Error(Errc::invalid_argument, fmt::format("{}: {}", policy, message));
}

[[noreturn]] void glpk_failed(const char* call, int code) {
  throw Error(Errc::internal, fmt::format("AMP: GLPK {} failed with code {}", call, code));
}

bool finite_at_least(double value, double minimum) {
  return std::isfinite(value) && value >= minimum;
}

void validate_offers(std::span<const NodeClassOffer> offers, std::string_view policy) {
  for (std::size_t c = 0; c < offers.size(); ++c) {
    const NodeClassOffer& offer = offers[c];
    const std::string which = fmt::format("offers[{}] ('{}')", c, offer.name);
    if (!std::isfinite(offer.speed) || offer.speed <= 0.0) {
      invalid(policy,
              fmt::format("{}.speed: expected a finite value > 0, got {}", which, offer.speed));
    }
    if (!finite_at_least(offer.cost, 0.0)) {
      invalid(policy,
              fmt::format("{}.cost: expected a finite value >= 0, got {}", which, offer.cost));
    }
    if (!finite_at_least(offer.watts, 0.0)) {
      invalid(policy,
              fmt::format("{}.watts: expected a finite value >= 0, got {}", which, offer.watts));
    }
    if (offer.free_pes < 0) {
      invalid(policy, fmt::format("{}.free_pes: expected >= 0, got {}", which, offer.free_pes));
    }
    if (offer.running < 0) {
      invalid(policy, fmt::format("{}.running: expected >= 0, got {}", which, offer.running));
    }
    if (offer.removable < 0 || offer.removable > offer.running) {
      invalid(policy, fmt::format("{}.removable: expected 0..running ({}), got {}", which,
                                  offer.running, offer.removable));
    }
  }
}

double weighted_sum(const Counts& x, const std::vector<double>& weights) {
  double sum = 0.0;
  for (std::size_t c = 0; c < x.size(); ++c) sum += x[c] * weights[c];
  return sum;
}

std::vector<double> column(std::span<const NodeClassOffer> offers, double NodeClassOffer::*field) {
  std::vector<double> values;
  values.reserve(offers.size());
  for (const NodeClassOffer& offer : offers) values.push_back(offer.*field);
  return values;
}

std::vector<int> column(std::span<const NodeClassOffer> offers, int NodeClassOffer::*field) {
  std::vector<int> values;
  values.reserve(offers.size());
  for (const NodeClassOffer& offer : offers) values.push_back(offer.*field);
  return values;
}

// Class indices by speed, fastest (or slowest) first; class order breaks ties.
std::vector<std::size_t> classes_by_speed(const std::vector<double>& speeds, bool fastest_first) {
  std::vector<std::size_t> order(speeds.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return fastest_first ? speeds[a] > speeds[b] : speeds[a] < speeds[b];
  });
  return order;
}

// `count` processes taken class by class in `order`, each class up to its
// bound: Alg. 7's mapping of s PEs onto the fastest ones.
Counts take_in_order(const std::vector<int>& bounds, const std::vector<std::size_t>& order,
                     int count) {
  Counts x(bounds.size(), 0);
  for (const std::size_t c : order) {
    x[c] = std::min(count, bounds[c]);
    count -= x[c];
  }
  return x;
}

// The integer program of 5.4.3.1 in standard minimisation form (eq. 5.15):
// min sum_c objective_c x_c subject to sum_c x_c = count,
// sum_c speed_c x_c >= min_power, x_c integer in [0, bound_c].
// nullopt when no integer point satisfies it.
std::optional<Counts> solve_program(const std::vector<double>& objective,
                                    const std::vector<double>& speeds,
                                    const std::vector<int>& bounds, int count, double min_power) {
  const std::unique_ptr<glp_prob, decltype(&glp_delete_prob)> owner(glp_create_prob(),
                                                                    &glp_delete_prob);
  glp_prob* const problem = owner.get();
  const int classes = static_cast<int>(bounds.size());
  glp_set_obj_dir(problem, GLP_MIN);
  glp_add_rows(problem, 2);
  glp_set_row_bnds(problem, 1, GLP_FX, count, count);
  glp_set_row_bnds(problem, 2, GLP_LO, min_power, 0.0);
  glp_add_cols(problem, classes);
  // GLPK's arrays are 1-based: element 0 is unused.
  std::vector<int> rows{0};
  std::vector<int> cols{0};
  std::vector<double> values{0.0};
  for (int c = 1; c <= classes; ++c) {
    const std::size_t i = static_cast<std::size_t>(c - 1);
    glp_set_col_kind(problem, c, GLP_IV);
    if (bounds[i] == 0) {
      glp_set_col_bnds(problem, c, GLP_FX, 0.0, 0.0);
    } else {
      glp_set_col_bnds(problem, c, GLP_DB, 0.0, bounds[i]);
    }
    glp_set_obj_coef(problem, c, objective[i]);
    rows.insert(rows.end(), {1, 2});
    cols.insert(cols.end(), {c, c});
    values.insert(values.end(), {1.0, speeds[i]});
  }
  glp_load_matrix(problem, 2 * classes, rows.data(), cols.data(), values.data());

  // The LP relaxation first (glp_intopt needs its optimum without presolve).
  glp_smcp simplex;
  glp_init_smcp(&simplex);
  simplex.msg_lev = GLP_MSG_OFF;
  simplex.presolve = GLP_ON;
  const int simplex_code = glp_simplex(problem, &simplex);
  if (simplex_code == GLP_ENOPFS) return std::nullopt;  // presolve: relaxation infeasible
  if (simplex_code != 0) glpk_failed("glp_simplex", simplex_code);
  const int relaxation = glp_get_status(problem);
  if (relaxation == GLP_NOFEAS) return std::nullopt;
  if (relaxation != GLP_OPT) glpk_failed("glp_simplex (status)", relaxation);

  glp_iocp branch_and_bound;
  glp_init_iocp(&branch_and_bound);
  branch_and_bound.msg_lev = GLP_MSG_OFF;
  // The default integrality tolerance (1e-5) takes x = 0.99998 for 1: a power
  // bound just above a level would then return that level again.
  branch_and_bound.tol_int = 1e-9;
  const int intopt_code = glp_intopt(problem, &branch_and_bound);
  if (intopt_code != 0) glpk_failed("glp_intopt", intopt_code);
  const int status = glp_mip_status(problem);
  if (status == GLP_NOFEAS) return std::nullopt;
  if (status != GLP_OPT) glpk_failed("glp_intopt (status)", status);

  Counts x(bounds.size());
  for (int c = 1; c <= classes; ++c) {
    x[static_cast<std::size_t>(c - 1)] = static_cast<int>(std::lround(glp_mip_col_val(problem, c)));
  }
  return x;
}

PlannedCandidate make_candidate(std::span<const NodeClassOffer> offers, Counts delta,
                                double predicted_seconds, std::string step) {
  PlannedCandidate candidate;
  for (std::size_t c = 0; c < delta.size(); ++c) {
    candidate.processes += delta[c];
    candidate.power += delta[c] * offers[c].speed;
    candidate.cost += delta[c] * offers[c].cost;
    candidate.watts += delta[c] * offers[c].watts;
  }
  candidate.delta = std::move(delta);
  candidate.predicted_seconds = predicted_seconds;
  candidate.step = std::move(step);
  return candidate;
}

// Calls the caller's prediction, checks its answer and records it in `decision`.
double predict_and_record(std::span<const NodeClassOffer> offers, const PredictRemaining& predict,
                          std::string_view policy, Counts delta, std::string step,
                          MalleabilityDecision& decision) {
  const double seconds = predict(delta);
  if (!finite_at_least(seconds, 0.0)) {
    invalid(policy, fmt::format("predict: expected finite seconds >= 0, got {} for delta {}",
                                seconds, delta));
  }
  decision.considered.push_back(make_candidate(offers, std::move(delta), seconds, std::move(step)));
  return seconds;
}

// The removable processes of all classes.
int total_removable(std::span<const NodeClassOffer> offers) {
  const std::vector<int> removable = column(offers, &NodeClassOffer::removable);
  return std::accumulate(removable.begin(), removable.end(), 0);
}

// Removing r removable processes, those of the slowest classes first (class
// order breaks speed ties), as a delta (<= 0).
Counts slowest_removal(std::span<const NodeClassOffer> offers, int r) {
  Counts delta = take_in_order(column(offers, &NodeClassOffer::removable),
                               classes_by_speed(column(offers, &NodeClassOffer::speed), false), r);
  for (int& d : delta) d = -d;
  return delta;
}

void check_callback(const PredictRemaining& predict, std::string_view policy) {
  if (!predict) invalid(policy, "predict: expected a prediction callback, got an empty function");
}

// AMP's search for one direction (spawn or removal), as described at the top.
class AmpSearch {
 public:
  // spawn: x_c processes spawned on class c, bound free_pes;
  // removal: x_c of the removable processes kept, bound removable.
  AmpSearch(std::span<const NodeClassOffer> offers, const AmpGoal& goal,
            const PredictRemaining& predict, bool spawn, MalleabilityDecision& decision)
      : offers_(offers),
        predict_(predict),
        spawn_(spawn),
        decision_(decision),
        target_seconds_(goal.goal_seconds * (1.0 + goal.tolerance)),
        efficiency_(goal.constraint == AmpConstraint::efficiency),
        program_step_(fmt::format("{} program", to_string(goal.constraint))),
        speeds_(column(offers, &NodeClassOffer::speed)),
        bounds_(column(offers, spawn ? &NodeClassOffer::free_pes : &NodeClassOffer::removable)),
        objective_(goal.constraint == AmpConstraint::cost ? column(offers, &NodeClassOffer::cost)
                   : goal.constraint == AmpConstraint::energy
                       ? column(offers, &NodeClassOffer::watts)
                       : speeds_),
        fastest_first_(classes_by_speed(speeds_, true)),
        cheapest_first_(classes_by_speed(objective_, false)) {
    // Powers closer than this are one level: well above GLPK's tolerances
    // (feasibility 1e-7 relative, integrality 1e-9 as set in solve_program),
    // so a bound of `level + tolerance` excludes the level.
    const double most_power =
        weighted_sum(take_in_order(bounds_, fastest_first_, total_bound()), speeds_);
    level_tolerance_ = 1e-6 * (1.0 + most_power);
  }

  struct Configuration {
    Counts x;
    double power = 0.0;      // sum x_c speed_c
    double objective = 0.0;  // sum x_c objective_c
    double predicted_seconds = 0.0;
  };

  // A configuration meets the goal when it is predicted within `seconds`
  // (the band's upper edge until told otherwise).
  void aim_at(double seconds) { target_seconds_ = seconds; }

  [[nodiscard]] int total_bound() const {
    return std::accumulate(bounds_.begin(), bounds_.end(), 0);
  }

  // The best configuration over the counts in [first, last] (x processes),
  // nullopt if none meets the goal.
  std::optional<Configuration> find_best(int first, int last) {
    std::optional<Configuration> best;
    for (int k = first; k <= last; ++k) {
      // Cost and energy: a count whose cheapest k PEs cannot beat the best is skipped.
      if (best && !efficiency_ &&
          !better(weighted_sum(take_in_order(bounds_, cheapest_first_, k), objective_),
                  best->objective)) {
        continue;
      }
      std::optional<Configuration> at_count = best_at(k);
      if (!at_count) continue;
      if (efficiency_) return at_count;
      if (!best || better(at_count->objective, best->objective)) best = std::move(at_count);
    }
    return best;
  }

  // The most-power configuration predicted fastest over the counts searched
  // (Alg. 7's candidates): the best effort when nothing meets the goal.
  [[nodiscard]] const std::optional<Configuration>& fastest_seen() const { return fastest_seen_; }

  [[nodiscard]] Counts delta(const Counts& x) const {
    if (spawn_) return x;
    Counts removed(x.size());
    for (std::size_t c = 0; c < x.size(); ++c) removed[c] = x[c] - bounds_[c];
    return removed;
  }

 private:
  static bool better(double objective, double best) {
    return objective < best - kTieTolerance * (1.0 + std::abs(best));
  }

  [[nodiscard]] bool meets(const Configuration& c) const {
    return c.predicted_seconds <= target_seconds_;
  }

  Configuration evaluate(Counts x, std::string step) {
    Configuration c;
    c.power = weighted_sum(x, speeds_);
    c.objective = weighted_sum(x, objective_);
    c.predicted_seconds =
        predict_and_record(offers_, predict_, "AMP", delta(x), std::move(step), decision_);
    c.x = std::move(x);
    return c;
  }

  // The configuration of k processes with the least objective that meets the
  // goal, given `strongest`, the most powerful, which meets it. Invariant:
  // every configuration of power <= `missing` misses (the assumption above),
  // so the program over powers above `missing` holds every one that meets,
  // and its optimum, if it meets, is the answer. A miss raises `missing` to
  // the power it had; a probe halfway to `enough` (a power that suffices)
  // raises it faster. Should the programs run out (the assumption fails),
  // `strongest` stands.
  Configuration cheapest_meeting(int k, const Configuration& strongest) {
    double missing = -level_tolerance_;  // below every power: none known to miss yet
    double enough = strongest.power;
    while (true) {
      std::optional<Counts> optimum =
          solve_program(objective_, speeds_, bounds_, k, missing + level_tolerance_);
      if (!optimum) return strongest;
      Configuration candidate = evaluate(std::move(*optimum), program_step_);
      if (meets(candidate)) return candidate;
      missing = std::max(candidate.power, missing + level_tolerance_);
      if (enough - missing <= 2 * level_tolerance_) continue;
      const double halfway = (missing + enough) / 2;
      std::optional<Counts> probe = solve_program(objective_, speeds_, bounds_, k, halfway);
      if (!probe) continue;
      const Configuration probed = evaluate(std::move(*probe), "power search");
      if (meets(probed)) {
        enough = halfway;
      } else {
        missing = std::max(missing, probed.power);
      }
    }
  }

  std::optional<Configuration> best_at(int k) {
    const Configuration strongest =
        evaluate(take_in_order(bounds_, fastest_first_, k), "most power");
    if (!fastest_seen_ || strongest.predicted_seconds < fastest_seen_->predicted_seconds) {
      fastest_seen_ = strongest;
    }
    // The most power k processes reach: if it misses, every configuration of k does.
    if (!meets(strongest)) return std::nullopt;
    return cheapest_meeting(k, strongest);
  }

  std::span<const NodeClassOffer> offers_;
  const PredictRemaining& predict_;
  bool spawn_;
  MalleabilityDecision& decision_;
  double target_seconds_;
  bool efficiency_;
  std::string program_step_;
  std::vector<double> speeds_;
  std::vector<int> bounds_;
  std::vector<double> objective_;
  std::vector<std::size_t> fastest_first_;
  std::vector<std::size_t> cheapest_first_;
  double level_tolerance_ = 0.0;
  std::optional<Configuration> fastest_seen_;
};

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

MalleabilityDecision keep(std::size_t classes, double predicted_seconds, std::string reason) {
  MalleabilityDecision decision;
  decision.delta.assign(classes, 0);
  decision.predicted_seconds = predicted_seconds;
  decision.reason = std::move(reason);
  return decision;
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

std::string_view to_string(AmpConstraint constraint) {
  switch (constraint) {
    case AmpConstraint::efficiency:
      return "efficiency";
    case AmpConstraint::cost:
      return "cost";
    case AmpConstraint::energy:
      return "energy";
  }
  return "unknown";
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
  // spawn that did not pay is given back (docs/architecture.md).
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
// (docs/architecture.md).
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
  // every emulated-cluster run late (docs/architecture.md): a change aims at
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

AmpConstraint parse_amp_constraint(std::string_view text) {
  for (const AmpConstraint c :
       {AmpConstraint::efficiency, AmpConstraint::cost, AmpConstraint::energy}) {
    if (to_string(c) == text) return c;
  }
  throw Error(Errc::bad_config, "FLEXMPI_CONSTRAINT='" + std::string(text) +
                                    "' is invalid: expected one of efficiency, cost, energy");
}

}  // namespace flexmpi
