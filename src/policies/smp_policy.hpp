// FLEXMPI_POLICY=smp: the Strict malleability policy (thesis 5.4.1, Alg. 6).
// Today it follows the predefined process schedule (FLEXMPI_SCHEDULE): at the
// first sampling interval ending at or after an action's iteration it spawns
// or removes the processes, bounded by FLEXMPI_MAX_PROCS, then rebalances
// every row (Alg. 6 lines 14-17); in the intervals between, it balances the
// load as the lb policy does. Growing onto PEs a resource manager offers is
// the other half of Alg. 6 (issue 13).
#pragma once

#include <cstddef>
#include <vector>

#include "policies/lb_policy.hpp"
#include "policies/schedule.hpp"

namespace flexmpi {

class SmpPolicy final : public Policy {
 public:
  explicit SmpPolicy(const Config& config);
  [[nodiscard]] std::string_view name() const override { return "smp"; }
  PolicyDecision on_interval(const IntervalInput& input) override;
  void on_reconfiguration() override { balancing_.on_reconfiguration(); }
  [[nodiscard]] std::vector<double> measured_speeds() const override {
    return balancing_.measured_speeds();
  }
  [[nodiscard]] nlohmann::json export_state() const override { return {{"next_action", next_}}; }
  void import_state(const nlohmann::json& state) override;

 private:
  LbPolicy balancing_;
  std::vector<ScheduledAction> schedule_;
  int max_procs_ = 0;     // 0: as many as the scheduler finds PEs for
  std::size_t next_ = 0;  // first action not carried out
};

}  // namespace flexmpi
