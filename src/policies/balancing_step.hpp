// Dynamic load balancing as a policy step (thesis 5.2, Alg. 5, with the
// hysteresis and gain-versus-cost rules of docs/design/balancing.md): the
// interval becomes the balancer's situation, the balancer is asked, and the
// blocks it chose are the answer. The whole of the load-balancing policy,
// and what the policies that change the processes do between their changes.
#pragma once

#include <vector>

#include "balancing/load_balancer.hpp"
#include "policies/policy.hpp"

namespace flexmpi {

class BalancingStep {
 public:
  explicit BalancingStep(const Config& config) : balancer_(config) {}
  /// The blocks the balancer chose for the interval of `input` (target set
  /// when they change), its reasons in the record.
  PolicyDecision on_interval(const IntervalInput& input);
  /// The processes changed: the balancer's history no longer applies.
  void on_reconfiguration() { balancer_.reset_history(); }
  [[nodiscard]] std::vector<double> measured_speeds() const { return balancer_.evidence_speeds(); }
  /// The last interval's blocks stayed only for want of confirmation
  /// (BalanceDecision::awaiting_confirmation).
  [[nodiscard]] bool awaiting_confirmation() const { return awaiting_confirmation_; }

 private:
  LoadBalancer balancer_;
  bool awaiting_confirmation_ = false;
};

}  // namespace flexmpi
