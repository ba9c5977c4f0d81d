// FLEXMPI_POLICY=smp: the Strict malleability policy (thesis 5.4.1, Alg. 6).
// At the end of each sampling interval, in this order:
//   1. processes on PEs the resource manager reclaimed are removed (never one
//      of the initial set), their data going to the others;
//   2. the next action of the predefined schedule (FLEXMPI_SCHEDULE) whose
//      iteration has come: spawn or remove, bounded by the processes the
//      job may reach (ResourceView::bound: FLEXMPI_MAX_PROCS, else the
//      slots mpiexec gave the job without a hostfile), said once if cut;
//   3. else, without a schedule, the job grows onto the idle PEs the
//      resource manager grants (FLEXMPI_RESOURCES), up to that bound
//      (Alg. 6 lines 3-11); with one, the schedule alone adds processes;
//   4. else the load is balanced (BalancingStep).
// After a change every row is rebalanced (Alg. 6 lines 14-17). One change per
// interval: a spawned process starts its loop between two of them. From
// XMPI_Eval_lbalance the load is balanced and a change waits: a due schedule
// action stays due until an XMPI_Eval_reconfig interval carries it out.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "policies/malleability_policy.hpp"
#include "policies/schedule.hpp"

namespace flexmpi {

class SmpPolicy final : public MalleabilityPolicy {
 public:
  explicit SmpPolicy(const Config& config);
  [[nodiscard]] std::string_view name() const override { return "smp"; }
  PolicyDecision on_interval(const IntervalInput& input) override;
  [[nodiscard]] nlohmann::json export_state() const override { return {{"next_action", next_}}; }
  void import_state(const nlohmann::json& state) override;

 private:
  /// Step 2: the schedule's next action, if its iteration has come (the
  /// caller moves on to the following one once it is carried out).
  [[nodiscard]] std::optional<PolicyDecision> scheduled_action(const IntervalInput& input) const;
  /// Step 3: spawn onto the idle PEs, if any.
  [[nodiscard]] std::optional<PolicyDecision> grow(const IntervalInput& input) const;

  std::vector<ScheduledAction> schedule_;
  std::size_t next_ = 0;  // first action not carried out
};

}  // namespace flexmpi
