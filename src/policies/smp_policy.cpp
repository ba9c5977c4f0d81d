#include "policies/smp_policy.hpp"

#include <algorithm>

#include "config/config.hpp"

namespace flexmpi {

SmpPolicy::SmpPolicy(const Config& config)
    : balancing_(config), schedule_(config.schedule), max_procs_(config.max_procs) {}

void SmpPolicy::import_state(const nlohmann::json& state) {
  if (state.contains("next_action")) next_ = state["next_action"].get<std::size_t>();
}

PolicyDecision SmpPolicy::on_interval(const IntervalInput& input) {
  // One action per sampling interval: a spawned process starts its loop
  // between two of them, so every process takes part in each.
  if (next_ >= schedule_.size() || schedule_[next_].iteration > input.iteration) {
    return balancing_.on_interval(input);
  }
  const ScheduledAction action = schedule_[next_++];
  const int nprocs = static_cast<int>(input.report.processes.size());
  PolicyDecision decision;
  decision.record = {{"schedule_action",
                      {{"iteration", action.iteration},
                       {"action", action.spawn ? "spawn" : "remove"},
                       {"count", action.count},
                       {"node_class", action.node_class}}}};
  int count = action.count;
  if (action.spawn && max_procs_ > 0) count = std::min(count, max_procs_ - nprocs);
  if (count <= 0) {
    decision.record["decision"] = "held";
    decision.record["held"] = "FLEXMPI_MAX_PROCS=" + std::to_string(max_procs_) + " processes";
    return decision;
  }
  decision.record["decision"] = "reconfigure";
  ProcessChange change;
  (action.spawn ? change.spawn : change.remove) = count;
  change.node_class = action.node_class;
  decision.change = change;
  return decision;
}

}  // namespace flexmpi
