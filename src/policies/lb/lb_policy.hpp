// FLEXMPI_POLICY=lb: dynamic load balancing (thesis 5.2, Alg. 5): every
// interval the balancing step (BalancingStep), nothing else. The model
// policy: a class behind the Policy interface and its registry entry.
#pragma once

#include "policies/balancing_step.hpp"
#include "policies/policy.hpp"

namespace flexmpi {

class LbPolicy final : public Policy {
 public:
  explicit LbPolicy(const Config& config) : balancing_(config) {}
  [[nodiscard]] std::string_view name() const override { return "lb"; }
  PolicyDecision on_interval(const IntervalInput& input) override {
    return balancing_.on_interval(input);
  }
  void on_reconfiguration() override { balancing_.on_reconfiguration(); }
  [[nodiscard]] std::vector<double> measured_speeds() const override {
    return balancing_.measured_speeds();
  }

 private:
  BalancingStep balancing_;
};

}  // namespace flexmpi
