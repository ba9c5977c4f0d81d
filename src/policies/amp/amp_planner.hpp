// AMP's decision (thesis 5.4.3, Alg. 8, with the integer programs of
// 5.4.3.1 solved by GLPK): the cheapest configuration under a constraint
// that still meets a completion-time goal. Pure logic, no MPI
// (policies/planner/malleability_planner.hpp).
#pragma once

#include <span>

#include "policies/amp/amp_constraint.hpp"
#include "policies/planner/malleability_planner.hpp"

namespace flexmpi {

/// The AMP goal for the remaining run.
struct AmpGoal {
  double goal_seconds = 0.0;  ///< the remaining run should take this long, > 0
  double tolerance = 0.01;    ///< half-width of the goal band, fraction of the goal, [0, 1)
  AmpConstraint constraint = AmpConstraint::efficiency;
  double current_prediction = 0.0;  ///< predicted remaining seconds with no change, >= 0
};

/// AMP (Alg. 8): keeps the configuration while `current_prediction` is in
/// the band goal x [1 - tolerance, 1 + tolerance]. Slower than the band: the
/// spawn that meets the goal (predicted <= goal x (1 - tolerance), the band's
/// lower edge; if no spawn does, <= goal x (1 + tolerance)) with the
/// fewest processes, then the least power (efficiency), the least cost per
/// hour (cost) or the least watts (energy), ties to fewer processes; if none
/// meets it, a decision with meets_goal = false and the configuration
/// predicted fastest among the spawns evaluated and the removals of the
/// slowest removable processes, if faster than now (best effort). Faster than the band: the
/// removal that still meets the goal (predicted <= goal x (1 - tolerance)) and removes the most
/// processes, then the most power (efficiency), the most cost (cost) or the most watts (energy),
/// ties to more processes removed; none: keep. The search and its assumption are described in
/// amp_search.cpp. Never throws for an unreachable goal; throws flexmpi::Error
/// (invalid_argument) naming the argument for invalid offers or goal, an empty callback, or a
/// prediction that is not finite and >= 0.
MalleabilityDecision plan_amp(std::span<const NodeClassOffer> offers, const AmpGoal& goal,
                              const PredictRemaining& predict);

}  // namespace flexmpi
