// The planners' shared answer and its trace form (malleability_planner.hpp).
#include "policies/planner/malleability_planner.hpp"

#include <algorithm>

namespace flexmpi {

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

}  // namespace flexmpi
