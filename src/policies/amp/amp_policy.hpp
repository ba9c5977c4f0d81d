// FLEXMPI_POLICY=amp: the Adaptive malleability policy (thesis 5.4.3,
// Alg. 8): the job changes its processes so that the run completes within a
// goal, at the least use of the resources under FLEXMPI_CONSTRAINT. At the
// end of each sampling interval, in this order:
//   1. processes on PEs the resource manager reclaimed are removed
//      (reclaim_action, MalleabilityPolicy);
//   2. the goal of the remaining run is the goal of the whole run minus the
//      time elapsed since the loop started; the current prediction is the
//      remaining run with no change (predict_run, model/run_predictor.hpp).
//      plan_amp keeps the processes while the prediction is within the goal
//      band goal x [1 - FLEXMPI_GOAL_TOLERANCE, 1 + FLEXMPI_GOAL_TOLERANCE]
//      (Alg. 8 line 5, with its inverted condition corrected); slower, it
//      spawns the cheapest configuration that meets the goal, or the fastest
//      one when none does (best effort, traced as goal_met = false); faster,
//      it removes the spawned processes that can go while the goal is met;
//   3. else the load is balanced (BalancingStep).
// Every candidate, the goal, the remaining goal and the prediction go to the
// trace ("amp"), the chosen candidate's by phase ("amp"."prediction").
//
// The goal: FLEXMPI_GOAL seconds, or with FLEXMPI_GOAL_SPEEDUP = f the
// static run's predicted time x (1 - f), the static run (the initial
// processes, balanced) predicted at its first balanced interval: the time so
// far plus that interval's time per iteration to the end.
//
// What AMP learns from the run to correct its prediction, and when it may
// plan: RunLearning (run_learning.hpp). Beyond the thesis,
// a change aims at the goal band's lower edge (plan_amp).
//
// The elapsed time is the run's clock in the report (IntervalReport::
// run_seconds: the wall time since the first monitored iteration of the
// processes started with the job), the same on every process.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "model/machine_profile.hpp"
#include "policies/amp/amp_planner.hpp"
#include "policies/class_offers.hpp"
#include "policies/malleability_policy.hpp"
#include "policies/run_learning.hpp"
#include "resources/node_classes.hpp"

namespace flexmpi {

/// AMP's planning step for one interval (pure, no MPI).
struct AmpPlan {
  ClassOffers offers;
  double goal_seconds = 0.0;             ///< the whole run's goal
  double elapsed_seconds = 0.0;          ///< since the loop started
  double remaining_goal = 0.0;           ///< goal_seconds - elapsed_seconds (may be <= 0)
  double current_prediction = 0.0;       ///< predicted remaining seconds with no change
  double iteration_correction = 1.0;     ///< at the current count, as planned with
  double overhead_offset = 0.0;          ///< the same, added to the overhead (with a profile)
  double change_settling_seconds = 0.0;  ///< OfferSituation's, as planned with
  MalleabilityDecision decision;
  RunPrediction prediction;  ///< of decision.delta, by phase

  [[nodiscard]] nlohmann::json to_json() const;
};

/// plan_amp over the offers of `situation`, with the goal of the remaining
/// run goal_seconds - elapsed_seconds (a goal already passed is planned as
/// a goal of ~0: the fastest configuration, best effort). nullopt when
/// nothing was measured or no iteration remains.
[[nodiscard]] std::optional<AmpPlan> amp_plan(const OfferSituation& situation, double goal_seconds,
                                              double elapsed_seconds, double tolerance,
                                              AmpConstraint constraint);

class AmpPolicy final : public MalleabilityPolicy {
 public:
  explicit AmpPolicy(const Config& config);
  [[nodiscard]] std::string_view name() const override { return "amp"; }
  PolicyDecision on_interval(const IntervalInput& input) override;
  [[nodiscard]] nlohmann::json export_state() const override;
  void import_state(const nlohmann::json& state) override;

  /// The time elapsed since the loop started, at the latest interval
  /// (IntervalReport::run_seconds).
  [[nodiscard]] double elapsed_seconds() const { return elapsed_; }
  /// The whole run's goal; nullopt until FLEXMPI_GOAL_SPEEDUP's is known.
  [[nodiscard]] std::optional<double> goal_seconds() const { return goal_; }

 private:
  /// Balancing, and whether it left the blocks balanced (RunLearning).
  PolicyDecision balance_load(const IntervalInput& input) override;

  std::vector<NodeClass> node_classes_;
  MachineProfile profile_;
  double dedicated_threshold_ = 0.0;
  /// FLEXMPI_GOAL_SPEEDUP in seconds: of the profiled static run's traced
  /// time, else of the static run predicted at the first interval the
  /// learning is ready on (nullopt before).
  [[nodiscard]] std::optional<double> speedup_goal(const OfferSituation& situation) const;
  std::optional<double> goal_;     // FLEXMPI_GOAL, or from the speedup once predicted
  std::optional<double> speedup_;  // FLEXMPI_GOAL_SPEEDUP
  double tolerance_ = 0.01;
  AmpConstraint constraint_ = AmpConstraint::efficiency;
  double elapsed_ = 0.0;
  RunLearning learning_;
};

}  // namespace flexmpi
