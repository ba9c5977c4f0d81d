#include "policies/malleability_policy.hpp"

#include "config/config.hpp"
#include "model/computation_model.hpp"

namespace flexmpi {

MalleabilityPolicy::MalleabilityPolicy(const Config& config)
    : balancing_(config), work_profile_(config.work_profile) {}

void MalleabilityPolicy::add_profiled_steps(OfferSituation& situation) const {
  if (!work_profile_) return;
  situation.profiled_steps = profiled_steps(*work_profile_, situation.report.index);
}

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
