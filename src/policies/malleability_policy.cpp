#include "policies/malleability_policy.hpp"

namespace flexmpi {

std::optional<PolicyDecision> MalleabilityPolicy::reclaim_action(const IntervalInput& input) {
  if (input.resources == nullptr) return std::nullopt;
  if (!input.resources->unmet_reclaim.empty()) {
    PolicyDecision decision = balancing_.on_interval(input);
    decision.record["unmet_reclaim"] = input.resources->unmet_reclaim;
    return decision;
  }
  if (input.resources->reclaimed > 0) {
    PolicyDecision decision;
    decision.record = {{"decision", "reconfigure"},
                       {"reason", "PEs reclaimed by the resource manager"}};
    ProcessChange change;
    change.remove = input.resources->reclaimed;
    change.reclaim = true;
    decision.change = change;
    return decision;
  }
  return std::nullopt;
}

}  // namespace flexmpi
