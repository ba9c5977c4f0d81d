// AMP's search (amp_search.hpp; thesis 5.4.3).
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
//    all counts, ties to the first count. Cost and energy search the counts
//    best first: each count's search is resumable (CountSearch), the one
//    whose objective bound is lowest takes the next step, and a count whose
//    bound cannot beat the best configuration met is never refined again. "Meets" is predicted <= a
//    target: for a spawn the band's lower edge goal x (1 - tolerance), or, when no configuration
//    reaches it, its upper edge goal x (1 + tolerance) (a configuration in the band is one AMP
//    would keep); for a removal the lower edge. (Not the thesis's: why, in plan_amp,
//    amp_planner.cpp.)
//
// Removal is the mirror program over the processes *kept* among the
// removable ones, y_c = removable_c - r_c: maximising the processes, cost or
// watts removed is minimising those kept, and the remaining power is bounded
// from below by a bound on the kept power, so both directions share one
// program and one search. Fewer processes kept comes first: the most removed.
#include "policies/amp/amp_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>
#include <utility>

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
      cheapest_first_(classes_by_speed(objective_, false)),
      program_(objective_, speeds_, bounds_) {
  // Powers closer than this are one level: well above GLPK's tolerances
  // (feasibility 1e-7 relative, integrality 1e-9 as set in IntegerProgram::solve),
  // so a bound of `level + tolerance` excludes the level.
  const double most_power =
      weighted_sum(take_in_order(bounds_, fastest_first_, total_bound()), speeds_);
  level_tolerance_ = 1e-6 * (1.0 + most_power);
}

std::optional<AmpSearch::Configuration> AmpSearch::find_best(int first, int last) {
  if (!efficiency_) return find_cheapest(first, last);
  for (int k = first; k <= last; ++k) {
    std::optional<CountSearch> search = start(k);
    if (!search) continue;
    while (refine(*search)) {
    }
    return search->cheapest_met;
  }
  return std::nullopt;
}

std::optional<AmpSearch::Configuration> AmpSearch::find_cheapest(int first, int last) {
  std::vector<CountSearch> searches;
  for (int k = first; k <= last; ++k) {
    if (std::optional<CountSearch> search = start(k)) searches.push_back(std::move(*search));
  }
  // The configuration met that costs least, ties to the fewest processes.
  const CountSearch* best = nullptr;
  const auto take_if_best = [&](const CountSearch& search) {
    const double objective = search.cheapest_met.objective;
    if (best == nullptr || better(objective, best->cheapest_met.objective) ||
        (!better(best->cheapest_met.objective, objective) && search.k < best->k)) {
      best = &search;
    }
  };
  for (const CountSearch& search : searches) take_if_best(search);
  // Best first: the count whose bound is lowest is refined next, and a count
  // whose bound cannot beat (or tie with fewer processes) the best met is
  // dropped. Refining every count to its end, in order, took ~22 programs a
  // count: 1,200 at 1,024 processes on 32 classes, 30 ms.
  const auto later = [&](std::size_t a, std::size_t b) {
    return searches[a].lower_bound > searches[b].lower_bound ||
           (searches[a].lower_bound == searches[b].lower_bound && searches[a].k > searches[b].k);
  };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> queue(later);
  for (std::size_t i = 0; i < searches.size(); ++i) queue.push(i);
  while (!queue.empty()) {
    const std::size_t index = queue.top();
    queue.pop();
    CountSearch& search = searches[index];
    const double best_objective = best->cheapest_met.objective;
    const bool can_win = better(search.lower_bound, best_objective) ||
                         (!better(best_objective, search.lower_bound) && search.k < best->k);
    if (!can_win) continue;
    const bool open = refine(search);
    take_if_best(search);
    if (open) queue.push(index);
  }
  return best != nullptr ? std::optional<Configuration>(best->cheapest_met) : std::nullopt;
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

std::optional<AmpSearch::CountSearch> AmpSearch::start(int k) {
  Configuration strongest = evaluate(take_in_order(bounds_, fastest_first_, k), "most power");
  if (!fastest_seen_ || strongest.predicted_seconds < fastest_seen_->predicted_seconds) {
    fastest_seen_ = strongest;
  }
  if (!meets(strongest)) return std::nullopt;
  CountSearch search;
  search.k = k;
  search.missing = -level_tolerance_;  // below every power: none known to miss yet
  search.enough = strongest.power;
  // Before any program: the k PEs of least objective, whatever their power.
  search.lower_bound = weighted_sum(take_in_order(bounds_, cheapest_first_, k), objective_);
  search.cheapest_met = std::move(strongest);
  return search;
}

bool AmpSearch::refine(CountSearch& search) {
  std::optional<Counts> optimum = program_.solve(search.k, search.missing + level_tolerance_);
  if (!optimum) return false;
  Configuration candidate = evaluate(std::move(*optimum), program_step_);
  if (meets(candidate)) {
    if (!better(search.cheapest_met.objective, candidate.objective)) {
      search.cheapest_met = std::move(candidate);
    }
    search.lower_bound = search.cheapest_met.objective;
    return false;
  }
  search.lower_bound = std::max(search.lower_bound, candidate.objective);
  // Once the bound reaches what a configuration met costs, that one is the answer.
  if (!better(search.lower_bound, search.cheapest_met.objective)) return false;
  search.missing = std::max(candidate.power, search.missing + level_tolerance_);
  if (search.enough - search.missing <= 2 * level_tolerance_) return true;
  const double halfway = (search.missing + search.enough) / 2;
  std::optional<Counts> probe = program_.solve(search.k, halfway);
  if (!probe) return true;
  Configuration probed = evaluate(std::move(*probe), "power search");
  if (!meets(probed)) {
    search.missing = std::max(search.missing, probed.power);
    return true;
  }
  search.enough = halfway;
  if (better(probed.objective, search.cheapest_met.objective)) {
    search.cheapest_met = std::move(probed);
  }
  return better(search.lower_bound, search.cheapest_met.objective);
}

}  // namespace flexmpi::planning
