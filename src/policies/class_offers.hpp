// The node-class offers of the performance-aware malleability policies
// (thesis 5.4.2, 5.4.3) and their candidates' remaining run:
// pure logic over one interval report and the resource manager's view, so
// every process builds the same offers and predicts the same times. The
// prediction itself is the model's (predict_run, model/run_predictor.hpp):
// here a per-class change delta becomes the processes it spawns or removes
// and the speed they add or take, speed_c being the mean measured speed of
// the class's processes, or relative_speed(class) x the speed of a PE of
// relative speed 1 inferred from the fastest measured class.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/comm_model.hpp"
#include "model/computation_model.hpp"
#include "model/machine_profile.hpp"
#include "model/rebalance_model.hpp"
#include "model/run_predictor.hpp"
#include "monitoring/interval.hpp"
#include "policies/planner/malleability_planner.hpp"
#include "resources/node_classes.hpp"
#include "resources/resource_manager.hpp"

namespace flexmpi {

/// What the offers and the prediction read (pure data, no MPI).
struct OfferSituation {
  const IntervalReport& report;
  const ResourceView& resources;
  const std::vector<NodeClass>& node_classes;  ///< FLEXMPI_NODE_CLASSES
  const RedistributionCost& redistribution_cost;
  const MachineProfile& profile;
  int max_procs = 0;  ///< the processes the job may reach (ResourceView::bound), 0: the PEs
  long long remaining_iterations = 0;
  double data_bytes = 0.0;  ///< global rows x bytes per row of the registered data
  double dedicated_threshold = 0.0;
  /// The interval's communication, replayed on each candidate's process count
  /// (nullptr: computation and reconfiguration only).
  const CommunicationReplay* communication = nullptr;
  /// Measured / modelled time of one iteration per process count (the
  /// correction RunLearning learns): scales the per-iteration term of every
  /// candidate, as eq. 5.4-5.5's lambda scales communication, at the
  /// candidate's count (iteration_correction_at). Empty: the model alone.
  std::map<int, double> iteration_corrections = {};
  /// With profiled_steps: iteration_corrections corrects the computation,
  /// and these (measured - modelled overhead per iteration, seconds, per
  /// process count) are added to the overhead; between counts interpolated,
  /// beyond them the nearest (overhead_offset_at). Added, not multiplied:
  /// EpiGraph's quiet weeks on 16 processes measured 2.4 times the profiled
  /// overhead, and that ratio applied to the profiled peak's (3 times the
  /// quiet weeks', the 2 real cores saturated) predicted twice the overhead
  /// the peak had.
  std::map<int, double> overhead_offsets = {};
  /// What the first interval after a spawn or removal takes beyond a settled
  /// one (new processes starting, connections opened, moved rows touched
  /// first; RunLearning measures it): added to every candidate that
  /// changes the processes. 0: the model alone.
  double change_settling_seconds = 0.0;
  /// With FLEXMPI_PROFILE, the profiled intervals from the one measured on
  /// (profiled_steps; MalleabilityPolicy): the remaining run follows them.
  /// Empty: every remaining iteration is like the interval measured.
  std::vector<ProfiledStep> profiled_steps = {};
};

/// The job's node classes as the planner sees them, and what was measured.
struct ClassOffers {
  std::vector<NodeClassOffer> offers;  ///< one per class of the view
  double work_per_iteration = 0.0;     ///< W
  double current_speed = 0.0;          ///< S, the sum of the measured speeds

  /// The processes of a change, one node class per process: spawned
  /// (delta > 0) or removed (delta < 0), in class order.
  [[nodiscard]] std::vector<std::string> spawn_classes(const std::vector<int>& delta) const;
  [[nodiscard]] std::vector<std::string> remove_classes(const std::vector<int>& delta) const;
  /// {"offers": [...], "work_per_iteration", "current_speed"}
  [[nodiscard]] nlohmann::json to_json() const;
};

/// How many processes may still be spawned: the idle PEs granted (granted -
/// running, per class), bounded by FLEXMPI_MAX_PROCS; may be <= 0.
[[nodiscard]] int spawn_headroom(const OfferSituation& situation);

/// The offers, their free PEs capped by spawn_headroom fastest class first
/// (class order breaks ties, as plan_hpmp takes them); nullopt when nothing
/// was measured (no work or no speed).
[[nodiscard]] std::optional<ClassOffers> build_class_offers(const OfferSituation& situation);

/// OfferSituation::iteration_corrections at `processes` (correction_at).
[[nodiscard]] double iteration_correction_at(const OfferSituation& situation, int processes);
/// OfferSituation::overhead_offsets at `processes` (offset_at).
[[nodiscard]] double overhead_offset_at(const OfferSituation& situation, int processes);

/// What the model reads of `situation` and `offers` (views of the situation's
/// corrections and profiled steps: `situation` must outlive it).
[[nodiscard]] RunState run_state(const OfferSituation& situation, const ClassOffers& offers);

/// The remaining runs of one interval's candidates: the offers built once,
/// the model's state read once, each candidate predicted once (a planner
/// asks for many; the chosen one's phases are then the same prediction).
/// Views `situation`, which must outlive it.
class CandidatePredictor {
 public:
  CandidatePredictor(const OfferSituation& situation, ClassOffers offers);

  [[nodiscard]] const ClassOffers& offers() const { return offers_; }
  /// The remaining run after the per-class change `delta`, by phase.
  const RunPrediction& predict(const std::vector<int>& delta);
  /// predict(delta).seconds.
  double seconds(const std::vector<int>& delta) { return predict(delta).seconds; }
  /// No change: the remaining run on the processes as they are.
  const RunPrediction& current() { return predict(std::vector<int>(offers_.offers.size(), 0)); }
  /// seconds() as the planners' callback (this object must outlive it).
  [[nodiscard]] PredictRemaining callback();
  /// The corrections at the current process count, as predicted with.
  [[nodiscard]] double iteration_correction() const;
  [[nodiscard]] double overhead_offset() const;

 private:
  ClassOffers offers_;
  RunState state_;
  std::map<std::vector<int>, RunPrediction> predicted_;
};

}  // namespace flexmpi
