// What the planners of the performance-aware malleability policies (thesis
// 5.4.2, 5.4.3; each in its policy's folder) read and answer.
//
// Pure logic, no MPI: the caller describes the node classes it may use
// (NodeClassOffer) and supplies the prediction as a callback on a per-class
// change, so a planner depends on no model class. A decision is a per-class
// change plus everything considered on the way, for the trace.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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
/// run* (the span a completion-time goal refers to) if per_class_delta[c] processes are
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
  bool meets_goal = true;          ///< with a goal: false when no configuration is predicted
                                   ///< to meet it (best effort taken); without one: true
  std::vector<PlannedCandidate> considered;  ///< every prediction made, in order

  [[nodiscard]] bool changes() const;
};

void to_json(nlohmann::json& json, const PlannedCandidate& candidate);
void to_json(nlohmann::json& json, const MalleabilityDecision& decision);

}  // namespace flexmpi
