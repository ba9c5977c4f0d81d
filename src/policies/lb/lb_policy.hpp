// FLEXMPI_POLICY=lb: dynamic load balancing (thesis 5.2, Alg. 5, with the
// hysteresis and gain-versus-cost rules of docs/design/balancing.md). The model
// policy: it turns the interval into the balancer's situation, asks it, and
// returns the blocks it chose.
#pragma once

#include "balancing/load_balancer.hpp"
#include "policies/policy.hpp"

namespace flexmpi {

class LbPolicy final : public Policy {
 public:
  explicit LbPolicy(const Config& config) : balancer_(config) {}
  [[nodiscard]] std::string_view name() const override { return "lb"; }
  PolicyDecision on_interval(const IntervalInput& input) override;
  void on_reconfiguration() override { balancer_.reset_history(); }
  [[nodiscard]] std::vector<double> measured_speeds() const override {
    return balancer_.evidence_speeds();
  }
  /// The last interval's blocks stayed only for want of confirmation
  /// (BalanceDecision::awaiting_confirmation).
  [[nodiscard]] bool awaiting_confirmation() const { return awaiting_confirmation_; }

 private:
  LoadBalancer balancer_;
  bool awaiting_confirmation_ = false;
};

}  // namespace flexmpi
