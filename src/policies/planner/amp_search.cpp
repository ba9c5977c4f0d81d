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
//    x integer (integer_program.cpp: GLPK's branch and bound, or above 10^5
//    integer points a rounding of the relaxation), with obj = cost (cost), watts
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
//    lower edge. (Not the thesis's: why, in plan_amp,
//    malleability_planner.cpp.)
//
// Removal is the mirror program over the processes *kept* among the
// removable ones, y_c = removable_c - r_c: maximising the processes, cost or
// watts removed is minimising those kept, and the remaining power is bounded
// from below by a bound on the kept power, so both directions share one
// program and one search. Fewer processes kept comes first: the most removed.
#include "policies/planner/amp_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "policies/planner/integer_program.hpp"

namespace flexmpi::planning {

AmpSearch::AmpSearch(std::span<const NodeClassOffer> offers, const AmpGoal& goal,
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
      objective_(goal.constraint == AmpConstraint::cost     ? column(offers, &NodeClassOffer::cost)
                 : goal.constraint == AmpConstraint::energy ? column(offers, &NodeClassOffer::watts)
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

std::optional<AmpSearch::Configuration> AmpSearch::find_best(int first, int last) {
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

Counts AmpSearch::delta(const Counts& x) const {
  if (spawn_) return x;
  Counts removed(x.size());
  for (std::size_t c = 0; c < x.size(); ++c) removed[c] = x[c] - bounds_[c];
  return removed;
}

AmpSearch::Configuration AmpSearch::evaluate(Counts x, std::string step) {
  Configuration c;
  c.power = weighted_sum(x, speeds_);
  c.objective = weighted_sum(x, objective_);
  c.predicted_seconds =
      predict_and_record(offers_, predict_, "AMP", delta(x), std::move(step), decision_);
  c.x = std::move(x);
  return c;
}

AmpSearch::Configuration AmpSearch::cheapest_meeting(int k, const Configuration& strongest) {
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

std::optional<AmpSearch::Configuration> AmpSearch::best_at(int k) {
  const Configuration strongest = evaluate(take_in_order(bounds_, fastest_first_, k), "most power");
  if (!fastest_seen_ || strongest.predicted_seconds < fastest_seen_->predicted_seconds) {
    fastest_seen_ = strongest;
  }
  // The most power k processes reach: if it misses, every configuration of k does.
  if (!meets(strongest)) return std::nullopt;
  return cheapest_meeting(k, strongest);
}

}  // namespace flexmpi::planning
