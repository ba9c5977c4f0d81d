// FLEXMPI_POLICY=amp: the Adaptive malleability policy (thesis 5.4.3,
// Alg. 8): the job changes its processes so that the run completes within a
// goal, at the least use of the resources under FLEXMPI_CONSTRAINT. At the
// end of each sampling interval, in this order:
//   1. processes on PEs the resource manager reclaimed are removed
//      (reclaim_action, shared with smp and hpmp);
//   2. the goal of the remaining run is the goal of the whole run minus the
//      time elapsed since the loop started; the current prediction is the
//      remaining run with no change (predict_remaining, the model hpmp uses).
//      plan_amp keeps the processes while the prediction is within the goal
//      band goal x [1 - FLEXMPI_GOAL_TOLERANCE, 1 + FLEXMPI_GOAL_TOLERANCE]
//      (Alg. 8 line 5, with its inverted condition corrected); slower, it
//      spawns the cheapest configuration that meets the goal, or the fastest
//      one when none does (best effort, traced as goal_met = false); faster,
//      it removes the spawned processes that can go while the goal is met;
//   3. else the load is balanced as the lb policy does.
// Every candidate, the goal, the remaining goal and the prediction go to the
// trace ("amp").
//
// The goal: FLEXMPI_GOAL seconds, or with FLEXMPI_GOAL_SPEEDUP = f the
// static run's predicted time x (1 - f), the static run predicted from the
// first interval (equal blocks, as without balancing): its time per
// iteration over the whole run.
//
// What AMP learns, and when it plans (none of it in the thesis; measured on
// the emulated cluster, docs/architecture.md): an interval is representative
// when the balancer has set the blocks once, no process changed and no row
// moved just before it. On those, the measured / modelled iteration time
// per process count (median of 3) corrects the candidates of every count
// (iteration_correction_at). The interval after a spawn or removal, beyond
// the settled one after it, is what a change costs besides its spawn and
// data (SettlingCost), added to every candidate that changes the processes.
// AMP plans only on a count whose correction it has, never on the interval
// right after a change, and aims a change at the band's lower edge.
//
// The elapsed time is policy state that every process computes alike: the
// sum over the intervals evaluated of the longest process's wall time of the
// interval plus its redistribution time, plus the model's predicted cost of
// each spawn or removal the policy decided (the spawn itself is not in any
// interval). It misses the time outside the monitored iterations and of
// intervals nobody evaluated. A spawned process imports it (export_state).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "model/machine_profile.hpp"
#include "policies/malleability_planner.hpp"
#include "policies/malleability_policy.hpp"
#include "policies/remaining_time_model.hpp"
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
  double change_settling_seconds = 0.0;  ///< OfferSituation's, as planned with
  MalleabilityDecision decision;

  [[nodiscard]] nlohmann::json to_json() const;
};

/// plan_amp over the offers of `situation`, with the goal of the remaining
/// run goal_seconds - elapsed_seconds (a goal already passed is planned as
/// a goal of ~0: the fastest configuration, best effort). nullopt when
/// nothing was measured or no iteration remains.
[[nodiscard]] std::optional<AmpPlan> amp_plan(const OfferSituation& situation, double goal_seconds,
                                              double elapsed_seconds, double tolerance,
                                              AmpConstraint constraint);

/// Measured / modelled time per iteration of the interval of `situation`,
/// which lasted `interval` seconds (its slowest process): modelled is the
/// balanced iteration of the prediction (modelled_iteration_seconds on the
/// measured speeds). nullopt without a measurement. AmpPolicy's correction.
[[nodiscard]] std::optional<double> measured_over_modelled(const OfferSituation& situation,
                                                           double interval);

/// What the first interval after a spawn or removal takes beyond the settled
/// interval after it (new processes starting, connections opened, moved rows
/// touched first), learnt from the run: AmpPolicy's
/// OfferSituation::change_settling_seconds.
class SettlingCost {
 public:
  /// One interval, in order: its slowest process's seconds, its iterations,
  /// and whether a spawn or removal came just before it.
  void observe(double interval_seconds, int iterations, bool after_change);
  /// The median over the latest 3 changes priced; 0 before the first.
  [[nodiscard]] double seconds() const;
  [[nodiscard]] nlohmann::json to_json() const;
  void from_json(const nlohmann::json& state);

 private:
  static constexpr std::size_t kWindow = 3;
  // The interval after the latest change, until a settled one prices it.
  double pending_seconds_ = 0.0;
  int pending_iterations_ = 0;
  std::vector<double> excess_;
};

class AmpPolicy final : public MalleabilityPolicy {
 public:
  explicit AmpPolicy(const Config& config);
  [[nodiscard]] std::string_view name() const override { return "amp"; }
  PolicyDecision on_interval(const IntervalInput& input) override;
  [[nodiscard]] nlohmann::json export_state() const override;
  void import_state(const nlohmann::json& state) override;

  /// The time elapsed since the loop started: the intervals' slowest
  /// processes, the data moved, and each spawn or removal (predicted when
  /// decided, measured from the next interval on).
  [[nodiscard]] double elapsed_seconds() const { return elapsed_; }
  /// The whole run's goal; nullopt until FLEXMPI_GOAL_SPEEDUP's is known.
  [[nodiscard]] std::optional<double> goal_seconds() const { return goal_; }

 private:
  std::vector<NodeClass> node_classes_;
  MachineProfile profile_;
  int max_procs_ = 0;
  double dedicated_threshold_ = 0.0;
  std::optional<double> goal_;     // FLEXMPI_GOAL, or from the speedup once predicted
  std::optional<double> speedup_;  // FLEXMPI_GOAL_SPEEDUP
  double tolerance_ = 0.01;
  AmpConstraint constraint_ = AmpConstraint::efficiency;
  double elapsed_ = 0.0;
  // The spawn or removal cost added to elapsed_ when it was decided (the
  // model's), replaced by the measured one at the next interval.
  double predicted_reconfiguration_ = 0.0;
  // Measured / modelled iteration time of the latest settled intervals on each count.
  static constexpr std::size_t kCorrectionWindow = 3;
  std::map<int, std::vector<double>> iteration_corrections_;  // per process count
  SettlingCost settling_;
  // Whether the balancer has set the blocks once (the start's equal blocks
  // are not what the processes will run on).
  bool blocks_balanced_ = false;
  void learn_iteration_correction(const OfferSituation& situation, double interval);
  [[nodiscard]] std::map<int, double> iteration_corrections() const;
};

}  // namespace flexmpi
