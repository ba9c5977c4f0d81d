#include "policies/hpmp_policy.hpp"

#include <algorithm>
#include <cstddef>
#include <map>
#include <numeric>

#include "config/config.hpp"
#include "core/decomposition_state.hpp"
#include "model/reconfiguration_cost.hpp"
#include "policies/resource_actions.hpp"

namespace flexmpi {

std::vector<std::string> HpmpPlan::spawn_classes() const {
  std::vector<std::string> classes;
  for (std::size_t c = 0; c < offers.size() && c < decision.delta.size(); ++c) {
    for (int k = 0; k < decision.delta[c]; ++k) classes.push_back(offers[c].name);
  }
  return classes;
}

nlohmann::json HpmpPlan::to_json() const {
  nlohmann::json classes = nlohmann::json::array();
  for (const NodeClassOffer& o : offers) {
    classes.push_back({{"name", o.name},
                       {"speed", o.speed},
                       {"cost", o.cost},
                       {"free_pes", o.free_pes},
                       {"running", o.running}});
  }
  nlohmann::json out = decision;
  out["offers"] = std::move(classes);
  out["work_per_iteration"] = work_per_iteration;
  out["current_speed"] = current_speed;
  return out;
}

std::optional<HpmpPlan> hpmp_plan(const HpmpSituation& situation) {
  const ResourceView& view = situation.resources;
  const auto& processes = situation.report.processes;
  const int nprocs = static_cast<int>(processes.size());
  int headroom = 0;
  for (const NodeClassStatus& c : view.classes) headroom += std::max(0, c.granted_pes - c.running);
  if (situation.max_procs > 0) headroom = std::min(headroom, situation.max_procs - nprocs);
  if (headroom <= 0) return std::nullopt;

  // Measured: the work of one iteration and each process's speed, summed per class.
  HpmpPlan plan;
  std::map<std::string, std::pair<double, int>> per_class;  // sum of speeds, processes
  for (std::size_t p = 0; p < processes.size(); ++p) {
    const ProcessInterval& process = processes[p];
    if (process.iterations > 0) plan.work_per_iteration += process.metric / process.iterations;
    const double speed = process.speed(situation.dedicated_threshold);
    if (!(speed > 0.0)) continue;
    plan.current_speed += speed;
    if (p < view.process_classes.size() && !view.process_classes[p].empty()) {
      auto& entry = per_class[view.process_classes[p]];
      entry.first += speed;
      ++entry.second;
    }
  }
  if (!(plan.work_per_iteration > 0.0) || !(plan.current_speed > 0.0)) return std::nullopt;

  // The speed of a PE of relative speed 1, from the fastest measured class;
  // with no class known, the fastest process.
  double unit_speed = 0.0;
  for (const auto& [name, entry] : per_class) {
    const double mean = entry.first / entry.second;
    unit_speed = std::max(unit_speed, mean / relative_speed(situation.node_classes, name));
  }
  if (unit_speed <= 0.0) {
    for (const ProcessInterval& process : processes) {
      unit_speed = std::max(unit_speed, process.speed(situation.dedicated_threshold));
    }
  }

  for (const NodeClassStatus& c : view.classes) {
    NodeClassOffer offer;
    offer.name = c.name;
    const auto measured = per_class.find(c.name);
    offer.speed = measured != per_class.end()
                      ? measured->second.first / measured->second.second
                      : relative_speed(situation.node_classes, c.name) * unit_speed;
    offer.cost = c.cost;
    if (const auto described = find_node_class(situation.node_classes, c.name)) {
      offer.watts = described->watts;
    }
    offer.free_pes = std::max(0, c.granted_pes - c.running);
    offer.running = c.running;
    offer.removable = std::min(c.removable, c.running);
    plan.offers.push_back(std::move(offer));
  }
  // The headroom goes to the fastest classes first, as plan_hpmp takes them
  // (class order breaks speed ties, as there).
  std::vector<std::size_t> order(plan.offers.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return plan.offers[a].speed > plan.offers[b].speed;
  });
  for (const std::size_t c : order) {
    plan.offers[c].free_pes = std::min(plan.offers[c].free_pes, headroom);
    headroom -= plan.offers[c].free_pes;
  }

  const double remaining = static_cast<double>(std::max(0LL, situation.remaining_iterations));
  const auto predict = [&](const std::vector<int>& delta) {
    double speed = plan.current_speed;
    double added = 0.0;
    int spawned = 0;
    for (std::size_t c = 0; c < delta.size(); ++c) {
      speed += delta[c] * plan.offers[c].speed;
      if (delta[c] > 0) {
        added += delta[c] * plan.offers[c].speed;
        spawned += delta[c];
      }
    }
    double seconds = remaining * plan.work_per_iteration / speed;
    if (spawned > 0) {
      seconds += spawn_cost(situation.profile, spawned);
      seconds += situation.redistribution_cost.predict(situation.data_bytes * added / speed);
    }
    return seconds;
  };
  plan.decision = plan_hpmp(plan.offers, predict);
  return plan;
}

HpmpPolicy::HpmpPolicy(const Config& config)
    : balancing_(config),
      node_classes_(config.node_classes),
      profile_(MachineProfile::defaults()),
      max_procs_(config.max_procs),
      dedicated_threshold_(config.dedicated_threshold) {}

PolicyDecision HpmpPolicy::on_interval(const IntervalInput& input) {
  if (auto decision = reclaim_action(input, balancing_)) return *decision;
  std::optional<HpmpPlan> plan;
  if (input.resources != nullptr) {
    const DecompositionState& state = input.state;
    HpmpSituation situation{input.report,
                            *input.resources,
                            node_classes_,
                            input.redistribution_cost,
                            profile_,
                            max_procs_,
                            static_cast<long long>(input.max_iterations) - input.iteration - 1,
                            static_cast<double>(state.global_rows()) *
                                state.data().bytes_per_row(),
                            dedicated_threshold_};
    plan = hpmp_plan(situation);
  }
  if (plan && plan->decision.changes()) {
    PolicyDecision decision;
    decision.record = {{"decision", "reconfigure"},
                       {"reason", plan->decision.reason},
                       {"hpmp", plan->to_json()}};
    ProcessChange change;
    change.node_classes = plan->spawn_classes();
    change.spawn = static_cast<int>(change.node_classes.size());
    decision.change = std::move(change);
    return decision;
  }
  PolicyDecision decision = balancing_.on_interval(input);
  if (plan) decision.record["hpmp"] = plan->to_json();
  return decision;
}

}  // namespace flexmpi
