#include "policies/smp/smp_policy.hpp"

#include <algorithm>
#include <utility>

#include "config/config.hpp"
#include "policies/schedule.hpp"

namespace flexmpi {

namespace {

constexpr std::string_view kSchedule = "FLEXMPI_SCHEDULE";

}  // namespace

SmpPolicy::SmpPolicy(const Config& config)
    : MalleabilityPolicy(config),
      schedule_(config.strategy_settings.value_or<std::vector<ScheduledAction>>(kSchedule, {})) {}

void SmpPolicy::import_state(const nlohmann::json& state) {
  if (state.contains("next_action")) next_ = state["next_action"].get<std::size_t>();
}

PolicyDecision SmpPolicy::on_interval(const IntervalInput& input) {
  if (auto decision = reclaim_action(input)) return *decision;
  if (auto decision = scheduled_action(input)) {
    // A due action waiting for XMPI_Eval_reconfig stays due.
    if (!must_wait(*decision, input)) ++next_;
    return change_or_wait(std::move(*decision), input);
  }
  // A predefined schedule is the plan (thesis 5.4.1's first mode): the idle
  // PEs of a hostfile would otherwise be taken at the first interval.
  if (schedule_.empty()) {
    if (auto decision = grow(input)) return change_or_wait(std::move(*decision), input);
  }
  return balance_load(input);
}

std::optional<PolicyDecision> SmpPolicy::scheduled_action(const IntervalInput& input) const {
  if (next_ >= schedule_.size() || schedule_[next_].iteration > input.iteration) {
    return std::nullopt;
  }
  const ScheduledAction& action = schedule_[next_];
  const int nprocs = static_cast<int>(input.report.processes.size());
  PolicyDecision decision;
  decision.record = {{"schedule_action",
                      {{"iteration", action.iteration},
                       {"action", action.spawn ? "spawn" : "remove"},
                       {"count", action.count},
                       {"node_class", action.node_class}}}};
  const ProcessBound bound = input.resources != nullptr ? input.resources->bound : ProcessBound{};
  int count = action.count;
  if (action.spawn) {
    count = std::min(count, bound.headroom(nprocs));
    if (count < action.count) {
      decision.warning = "FLEXMPI_SCHEDULE: 'spawn " + std::to_string(action.count) +
                         "' at iteration " + std::to_string(action.iteration) + " is " +
                         (count > 0 ? "cut to " + std::to_string(count) : std::string("held")) +
                         ": " + std::to_string(static_cast<long long>(nprocs) + action.count) +
                         " processes would exceed " + bound.describe();
    }
  }
  if (count <= 0) {
    decision.record["decision"] = "held";
    decision.record["held"] = bound.origin;
    return decision;
  }
  decision.record["decision"] = "reconfigure";
  ProcessChange change;
  (action.spawn ? change.spawn : change.remove) = count;
  if (!action.node_class.empty()) {
    change.node_classes.assign(static_cast<std::size_t>(count), action.node_class);
  }
  decision.change = change;
  return decision;
}

std::optional<PolicyDecision> SmpPolicy::grow(const IntervalInput& input) const {
  if (input.resources == nullptr) return std::nullopt;
  int idle = 0;
  for (const NodeClassStatus& c : input.resources->classes) {
    idle += std::max(0, c.granted_pes - c.running);
  }
  const int nprocs = static_cast<int>(input.report.processes.size());
  idle = std::min(idle, input.resources->bound.headroom(nprocs));
  if (idle <= 0) return std::nullopt;
  PolicyDecision decision;
  decision.record = {{"decision", "reconfigure"}, {"reason", "idle PEs granted"}};
  ProcessChange change;
  change.spawn = idle;
  decision.change = change;
  return decision;
}

PolicyDescriptor smp_policy() {
  return {"smp",
          "strict malleability (thesis 5.4.1): the predefined schedule of FLEXMPI_SCHEDULE, load "
          "balancing in between",
          {{kSchedule, "schedule", "(none)",
            "a readable file of '<iteration> spawn|remove <count> [<procType>]' lines",
            "predefined process schedule of the smp policy (thesis 5.4.1); with one, smp adds "
            "processes only when the schedule says (idle PEs bound it, reclaims still count); an "
            "action runs at the first sampling-interval end at or after its iteration (40 with "
            "FLEXMPI_SAMPLING_INTERVAL=10: at the end of iteration 49), from XMPI_Eval_reconfig "
            "only (XMPI_Eval_lbalance leaves it due)",
            [](std::string_view v) {
              return std::any(parsed_by_component([&] { return read_schedule(std::string(v)); }));
            },
            true}},
          true,
          nullptr,
          [](const Config& config) -> std::unique_ptr<Policy> {
            return std::make_unique<SmpPolicy>(config);
          }};
}

}  // namespace flexmpi
