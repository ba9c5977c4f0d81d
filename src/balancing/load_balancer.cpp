#include "balancing/load_balancer.hpp"

#include "flexmpi/error.hpp"

namespace flexmpi {

nlohmann::json BalanceDecision::to_json() const {
  auto counts = [](const Decomposition& blocks) {
    nlohmann::json list = nlohmann::json::array();
    for (const RowBlock& block : blocks) list.push_back(block.count);
    return list;
  };
  nlohmann::json record = {
      {"decision", changed ? "rebalance" : (verdict.rebalance ? "balanced" : "none")},
      {"unbalanced", verdict.unbalanced},
      {"system_dedicated", verdict.system_dedicated},
      {"interference", to_string(verdict.interference)},
      {"partition_before", counts(before)},
      {"partition", counts(after)},
  };
  if (!fallback.empty()) record["fallback"] = fallback;
  return record;
}

LoadBalancer::LoadBalancer(const Config& config)
    : dedicated_threshold_(config.dedicated_threshold),
      detector_(config.imbalance_threshold, config.dedicated_threshold, config.k),
      partitioner_(make_partitioner(config.partitioner)) {}

BalanceDecision LoadBalancer::evaluate(const IntervalReport& report, const Decomposition& current,
                                       std::int64_t global_size,
                                       const std::vector<double>& row_work, bool may_rebalance) {
  if (report.processes.size() != current.size()) {
    throw Error(Errc::internal, "interval report and decomposition differ in process count");
  }
  std::vector<double> computation, wall, cpu;
  PartitionInput input;
  for (const ProcessInterval& p : report.processes) {
    computation.push_back(p.effective_computation(dedicated_threshold_));
    wall.push_back(p.wall);
    cpu.push_back(p.cpu);
    // computeFLOPS (Alg. 5 line 34): metric per second of computation time,
    // on a shared PE of the share of it the process got.
    input.speed.push_back(p.speed(dedicated_threshold_));
    input.work.push_back(p.iterations > 0 ? p.metric / p.iterations : 0.0);
    input.iterations.push_back(p.iterations);
  }
  BalanceDecision decision;
  decision.before = current;
  decision.after = current;
  decision.verdict = detector_.evaluate(computation, wall, cpu);
  if (!decision.verdict.rebalance || !may_rebalance) return decision;

  input.global_size = global_size;
  input.current = current;
  input.computation_time = computation;
  input.wall_time = wall;
  input.cpu_time = cpu;
  input.row_work = row_work;
  PartitionResult result = partitioner_->partition(input);
  if (!covers_exactly(result.blocks, global_size) || result.blocks.size() != current.size()) {
    // Never hand a partition that does not add up to the redistribution.
    decision.fallback = "partitioner '" + std::string(partitioner_->name()) +
                        "' returned blocks that do not cover the rows: partition kept";
    return decision;
  }
  decision.fallback = result.fallback;
  decision.after = std::move(result.blocks);
  decision.changed = decision.after != decision.before;
  return decision;
}

}  // namespace flexmpi
