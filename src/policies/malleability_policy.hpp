// What the policies that change the set of processes share (thesis 5.4,
// Alg. 6-8): they ask the resource manager every interval,
// remove the processes on reclaimed PEs before anything else, and balance
// the load between their process changes (BalancingStep). Called from
// XMPI_Eval_lbalance they only balance: a process change they would make
// waits for XMPI_Eval_reconfig (change_or_wait).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "policies/balancing_step.hpp"
#include "policies/class_offers.hpp"
#include "policies/policy.hpp"

namespace flexmpi {

struct Config;

class WorkProfile;

class MalleabilityPolicy : public Policy {
 public:
  explicit MalleabilityPolicy(const Config& config);
  [[nodiscard]] bool uses_resources() const override { return true; }
  void on_reconfiguration() override { balancing_.on_reconfiguration(); }
  [[nodiscard]] std::vector<double> measured_speeds() const override {
    return balancing_.measured_speeds();
  }

 protected:
  /// The first step at the end of an interval:
  ///  - a reclaim that cannot be honoured (ResourceView::unmet_reclaim): the
  ///    load is balanced and the reason traced;
  ///  - processes on reclaimed PEs (ResourceView::reclaimed > 0): they are
  ///    removed (ProcessChange{remove, reclaim = true}), through change_or_wait.
  /// nullopt when nothing was reclaimed (or there is no view).
  [[nodiscard]] std::optional<PolicyDecision> reclaim_action(const IntervalInput& input);

  /// Whether `decision` changes processes where the caller may not
  /// (IntervalInput::may_change_processes: XMPI_Eval_lbalance).
  [[nodiscard]] static bool must_wait(const PolicyDecision& decision, const IntervalInput& input);
  /// `decision`; or, if it must wait, the load balanced meanwhile, its record
  /// saying that the change (under "waiting_change") waits for XMPI_Eval_reconfig.
  PolicyDecision change_or_wait(PolicyDecision decision, const IntervalInput& input);
  /// The load balanced (BalancingStep); a policy that learns from
  /// balancing adds that here.
  virtual PolicyDecision balance_load(const IntervalInput& input) {
    return balancing_.on_interval(input);
  }

  /// From FLEXMPI_PROFILE, its intervals from the one of `situation`'s report
  /// on (profiled_steps) into `situation`; nothing without a profile.
  void add_profiled_steps(OfferSituation& situation) const;

  BalancingStep balancing_;                          ///< the load balancing between process changes
  std::shared_ptr<const WorkProfile> work_profile_;  ///< FLEXMPI_PROFILE, or null
};

}  // namespace flexmpi
