#include "policies/hpmp/hpmp_policy.hpp"

#include <algorithm>
#include <utility>

#include "config/config.hpp"
#include "redistribution/decomposition_state.hpp"

namespace flexmpi {

std::vector<std::string> HpmpPlan::spawn_classes() const {
  return ClassOffers{offers, work_per_iteration, current_speed}.spawn_classes(decision.delta);
}

std::vector<std::string> HpmpPlan::remove_classes() const {
  return ClassOffers{offers, work_per_iteration, current_speed}.remove_classes(decision.delta);
}

nlohmann::json HpmpPlan::to_json() const {
  nlohmann::json out = decision;
  out.update(ClassOffers{offers, work_per_iteration, current_speed}.to_json());
  out["prediction"] = prediction.to_json();
  return out;
}

std::optional<HpmpPlan> hpmp_plan(const HpmpSituation& situation) {
  const std::optional<ClassOffers> offers = build_class_offers(situation);
  if (!offers) return std::nullopt;
  const bool removable = std::any_of(offers->offers.begin(), offers->offers.end(),
                                     [](const NodeClassOffer& o) { return o.removable > 0; });
  if (spawn_headroom(situation) <= 0 && !removable) return std::nullopt;
  CandidatePredictor predictor(situation, *offers);
  HpmpPlan plan;
  plan.offers = offers->offers;
  plan.work_per_iteration = offers->work_per_iteration;
  plan.current_speed = offers->current_speed;
  plan.decision = plan_hpmp(plan.offers, predictor.callback());
  plan.prediction = predictor.predict(plan.decision.delta);
  return plan;
}

namespace {

// The spawn (or, if none, the removal) of a plan that changes processes.
PolicyDecision process_change(const HpmpPlan& plan) {
  PolicyDecision decision;
  decision.record = {
      {"decision", "reconfigure"}, {"reason", plan.decision.reason}, {"hpmp", plan.to_json()}};
  ProcessChange change;
  change.node_classes = plan.spawn_classes();
  change.spawn = static_cast<int>(change.node_classes.size());
  if (change.spawn == 0) {
    change.node_classes = plan.remove_classes();
    change.remove = static_cast<int>(change.node_classes.size());
  }
  decision.change = std::move(change);
  return decision;
}

}  // namespace

HpmpPolicy::HpmpPolicy(const Config& config)
    : MalleabilityPolicy(config),
      node_classes_(config.node_classes),
      profile_(config.machine_profile),
      dedicated_threshold_(config.dedicated_threshold) {}

PolicyDecision HpmpPolicy::on_interval(const IntervalInput& input) {
  learning_.observe(input.report, input.reconfiguration_seconds > 0.0);
  if (auto decision = reclaim_action(input)) return *decision;
  std::optional<HpmpPlan> plan;
  if (input.resources != nullptr) {
    const DecompositionState& state = input.state;
    HpmpSituation situation{input.report,
                            *input.resources,
                            node_classes_,
                            input.redistribution_cost,
                            profile_,
                            input.resources->bound.limit,
                            static_cast<long long>(input.max_iterations) - input.iteration - 1,
                            static_cast<double>(state.global_rows()) * state.data().bytes_per_row(),
                            dedicated_threshold_,
                            input.communication};
    add_profiled_steps(situation);
    learning_.learn_and_apply(situation);
    if (learning_.ready()) plan = hpmp_plan(situation);
  }
  if (plan && plan->decision.changes()) return change_or_wait(process_change(*plan), input);
  PolicyDecision decision = balance_load(input);
  if (plan) decision.record["hpmp"] = plan->to_json();
  return decision;
}

PolicyDecision HpmpPolicy::balance_load(const IntervalInput& input) {
  PolicyDecision decision = balancing_.on_interval(input);
  learning_.after_balancing(balancing_.awaiting_confirmation());
  return decision;
}

nlohmann::json HpmpPolicy::export_state() const { return {{"learning", learning_.to_json()}}; }

void HpmpPolicy::import_state(const nlohmann::json& state) {
  if (state.contains("learning")) learning_.from_json(state["learning"]);
}

PolicyDescriptor hpmp_policy() {
  return {"hpmp",
          "high performance malleability (thesis 5.4.2, Alg. 7): spawns on the idle PEs granted "
          "when the prediction says the rest of the run gets faster, load balancing in between",
          {},
          true,
          nullptr,
          [](const Config& config) -> std::unique_ptr<Policy> {
            return std::make_unique<HpmpPolicy>(config);
          }};
}

}  // namespace flexmpi
