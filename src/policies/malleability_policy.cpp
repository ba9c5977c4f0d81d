#include "policies/malleability_policy.hpp"

#include <utility>

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
    return change_or_wait(std::move(decision), input);
  }
  return std::nullopt;
}

bool MalleabilityPolicy::must_wait(const PolicyDecision& decision, const IntervalInput& input) {
  return decision.change.has_value() && !input.may_change_processes;
}

PolicyDecision MalleabilityPolicy::change_or_wait(PolicyDecision decision,
                                                  const IntervalInput& input) {
  if (!must_wait(decision, input)) return decision;
  // XMPI_Eval_lbalance never changes processes: an application that calls
  // only it has no code for newcomers, and a spawn there hung the run.
  PolicyDecision balanced = balance_load(input);
  balanced.record["process_change_waits_for"] = "XMPI_Eval_reconfig";
  balanced.record["waiting_change"] = std::move(decision.record);
  return balanced;
}

}  // namespace flexmpi
