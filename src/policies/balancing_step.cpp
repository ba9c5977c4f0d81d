#include "policies/balancing_step.hpp"

#include <utility>

#include "redistribution/decomposition_state.hpp"

namespace flexmpi {

PolicyDecision BalancingStep::on_interval(const IntervalInput& input) {
  DecompositionState& state = input.state;
  LoadBalancer::Situation situation;
  situation.current = state.blocks();
  situation.global_size = state.global_rows();
  if (state.model() != WorkloadModel::count) {
    situation.row_work = state.global_row_work(input.weight);
  }
  // Rebalancing pays off only if iterations remain to use the new partition.
  situation.remaining_iterations =
      static_cast<long long>(input.max_iterations) - input.iteration - 1;
  situation.bytes_per_row = state.data().bytes_per_row();
  BalanceDecision decision = balancer_.evaluate(input.report, situation, input.redistribution_cost);
  awaiting_confirmation_ = decision.awaiting_confirmation();
  PolicyDecision answer;
  answer.record = decision.to_json();
  if (decision.changed) answer.target = std::move(decision.after);
  return answer;
}

}  // namespace flexmpi
