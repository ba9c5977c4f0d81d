// FLEXMPI_POLICY=hpmp: the High performance malleability policy (thesis
// 5.4.2, Alg. 7): the job grows onto the idle PEs the resource manager
// grants when the prediction says the rest of the run gets faster. At the
// end of each sampling interval, in this order:
//   1. processes on PEs the resource manager reclaimed are removed
//      (reclaim_action, MalleabilityPolicy);
//   2. once RunLearning is ready (the blocks balanced, not right after a
//      change, the current count's correction measured): if some node class
//      has idle PEs (granted - running) below FLEXMPI_MAX_PROCS, or the job
//      has spawned processes: plan_hpmp evaluates spawning s = 0.. of the
//      fastest free PEs and, beyond Alg. 7, removing r = 1.. of the slowest
//      spawned processes, with the prediction below corrected by what the
//      run measured; the fastest predicted one is carried out (one
//      ProcessChange, one node class per process). Measured on a count it
//      overestimated (CG on 18 processes of 2 cores), HPMP gives back the
//      processes that did not pay;
//   3. else (or when no spawn is predicted faster) the load is balanced
//      (BalancingStep).
// Every candidate and its prediction go to the trace ("hpmp").
//
// The prediction (predict_run, model/run_predictor.hpp;
// pure, unit-tested; the node-class offers in policies/class_offers): the
// remaining run of a per-class change is
//   remaining iterations x (W / (S + sum_c delta_c x speed_c)      (eq. 5.3)
//                           + communication per iteration on the new count)
//   + spawn_cost(FLEXMPI_MACHINE_PROFILE's profile, spawned)  (eq. 5.6)
//   + RedistributionCost::predict(bytes the new processes receive)
// W: the work of one iteration (sum over processes of metric / iterations of
// the interval just closed); S: the sum of the measured speeds (metric per
// second of effective computation); speed_c: the mean measured speed of the
// class's processes, or, for a class none runs on, relative_speed(class) x
// the speed of a PE of relative speed 1 inferred from the fastest measured
// class (its mean over its relative speed). The new processes receive the
// share of the data bytes (global rows x bytes per row) of their speed. It
// assumes the load is balanced after the change (the balancer's job: rows
// in proportion to speed, so the iteration takes W / S). Communication
// (5.3.2): rank 0's PMPI profile of the interval, broadcast by the adaptation
// loop (CommunicationReplay), replayed on the candidate's process count with
// the machine profile's costs. The iteration is eq. 5.2's interval
// (predict_interval), the one the trace's forecaster and the balancer use,
// for one iteration and without lambda (learnt on rank 0 for the trace
// only). RunLearning's corrections scale the per-iteration term at the
// candidate's count, and a change pays the settling measured after the
// previous ones. The chosen candidate's prediction, by phase, goes to the
// trace ("hpmp"."prediction").
//
// Every process decides alike: everything comes from the report, the
// broadcast ResourceView and communication profile, the configuration and
// the controller's redistribution price (which a spawned process imports), and what
// RunLearning learnt, which a spawned process imports (export_state).
#pragma once

#include <optional>
#include <vector>

#include "model/machine_profile.hpp"
#include "policies/class_offers.hpp"
#include "policies/hpmp/hpmp_planner.hpp"
#include "policies/malleability_policy.hpp"
#include "policies/run_learning.hpp"
#include "resources/node_classes.hpp"

namespace flexmpi {

/// What HPMP's spawning step reads (pure data, no MPI).
using HpmpSituation = OfferSituation;

/// HPMP's spawning step: the offers and the planner's decision.
struct HpmpPlan {
  std::vector<NodeClassOffer> offers;  ///< one per class of the view
  MalleabilityDecision decision;
  double work_per_iteration = 0.0;
  double current_speed = 0.0;  ///< S, the sum of the measured speeds
  RunPrediction prediction;    ///< of decision.delta, by phase

  /// The processes to spawn, one node class per process (empty: none).
  [[nodiscard]] std::vector<std::string> spawn_classes() const;
  /// The processes to remove, one node class per process (empty: none).
  [[nodiscard]] std::vector<std::string> remove_classes() const;
  [[nodiscard]] nlohmann::json to_json() const;
};

/// nullopt when there is nothing to plan: no idle PE, the job at
/// FLEXMPI_MAX_PROCS, or nothing measured (no work or no speed).
[[nodiscard]] std::optional<HpmpPlan> hpmp_plan(const HpmpSituation& situation);

class HpmpPolicy final : public MalleabilityPolicy {
 public:
  explicit HpmpPolicy(const Config& config);
  [[nodiscard]] std::string_view name() const override { return "hpmp"; }
  PolicyDecision on_interval(const IntervalInput& input) override;
  [[nodiscard]] nlohmann::json export_state() const override;
  void import_state(const nlohmann::json& state) override;

 private:
  /// Balancing, and whether it left the blocks balanced (RunLearning).
  PolicyDecision balance_load(const IntervalInput& input) override;

  std::vector<NodeClass> node_classes_;
  MachineProfile profile_;
  double dedicated_threshold_ = 0.0;
  RunLearning learning_;
};

}  // namespace flexmpi
