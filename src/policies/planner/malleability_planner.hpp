// Decision logic of the performance-aware malleability policies (thesis 5.4):
// HPMP, the configuration predicted fastest (5.4.2, Alg. 7), and AMP, the
// cheapest configuration under a constraint that still meets a completion-time
// goal (5.4.3, Alg. 8, with the integer programs of 5.4.3.1 solved by GLPK).
//
// Pure logic, no MPI: the caller describes the node classes it may use
// (NodeClassOffer) and supplies the prediction as a callback on a per-class
// change, so the planner depends on no model class. A decision is a per-class
// change plus everything considered on the way, for the trace.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/amp_constraint.hpp"

namespace flexmpi {

/// One node class as the job sees it (hostfile `hostname:procType:numPE[:cost]`, thesis 5.4.3).
struct NodeClassOffer {
  std::string name;    ///< procType
  double speed = 1.0;  ///< relative speed of one PE of the class, > 0
  double cost = 0.0;   ///< per PE per hour, >= 0
  double watts = 0.0;  ///< per PE, >= 0
  int free_pes = 0;    ///< PEs of the class the job may still take, >= 0
  int running = 0;     ///< processes of the job already on the class, >= 0
  int removable = 0;   ///< of those, the ones that may be removed (spawned ones;
                       ///< the initial set stays, thesis 4.3.3), 0..running
};

/// The prediction the planner needs: the predicted seconds of the *remaining
/// run* (the span AMP's goal refers to) if per_class_delta[c] processes are
/// added (> 0) or removed (< 0) on offers[c], reconfiguration and
/// redistribution overheads included (thesis eq. 5.2; Alg. 8 line 13). The
/// vector has one entry per offer. Must return a finite value >= 0.
using PredictRemaining = std::function<double(const std::vector<int>& per_class_delta)>;

/// One configuration the planner had predicted.
struct PlannedCandidate {
  std::vector<int> delta;          ///< per class: added (> 0) or removed (< 0) processes
  int processes = 0;               ///< sum of delta
  double power = 0.0;              ///< computing power changed: sum delta_c x speed_c
  double cost = 0.0;               ///< cost per hour changed: sum delta_c x cost_c
  double watts = 0.0;              ///< power draw changed: sum delta_c x watts_c
  double predicted_seconds = 0.0;  ///< the callback's answer
  std::string step;                ///< the step of the search that evaluated it
};

/// What to do, why, and what was considered.
struct MalleabilityDecision {
  std::vector<int> delta;  ///< per class: processes to spawn (> 0) or remove (< 0); all 0: keep
  double predicted_seconds = 0.0;  ///< the prediction for delta
  std::string reason;              ///< one line for the trace
  bool meets_goal = true;          ///< AMP: false when no configuration is predicted to meet
                                   ///< the goal (best effort taken); HPMP: always true
  std::vector<PlannedCandidate> considered;  ///< every prediction made, in order

  [[nodiscard]] bool changes() const;
};

void to_json(nlohmann::json& json, const PlannedCandidate& candidate);
void to_json(nlohmann::json& json, const MalleabilityDecision& decision);

/// HPMP spawning action (Alg. 7 lines 6-15): for every count s = 0..sum of
/// free_pes, the s PEs of the fastest classes (class order breaks speed
/// ties), and, beyond Alg. 7, for every r = 1..sum of removable, the r
/// removable processes of the slowest classes (delta < 0), predicted with
/// `predict`; the lowest predicted time wins, ties to the fewest changes
/// (s = 0 first, then spawns, then removals). Throws flexmpi::Error (invalid_argument) for invalid
/// offers, an empty callback or a prediction that is not finite and >= 0.
MalleabilityDecision plan_hpmp(std::span<const NodeClassOffer> offers,
                               const PredictRemaining& predict);

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
/// malleability_planner.cpp. Never throws for an unreachable goal; throws flexmpi::Error
/// (invalid_argument) naming the argument for invalid offers or goal, an empty callback, or a
/// prediction that is not finite and >= 0.
MalleabilityDecision plan_amp(std::span<const NodeClassOffer> offers, const AmpGoal& goal,
                              const PredictRemaining& predict);

}  // namespace flexmpi
