// The node-class offers and the remaining-run prediction shared by the
// performance-aware malleability policies (hpmp, amp; thesis 5.4.2, 5.4.3).
// Pure logic over one interval report and the resource manager's view, so
// every process builds the same offers and predicts the same times.
//
// The prediction (documented in hpmp_policy.hpp): the remaining run of a
// per-class change delta is
//   remaining iterations x (W / (S + sum_c delta_c x speed_c)
//                           + communication per iteration on the new count)
//   + spawn_cost(profile, spawned) + redistribution of the new processes' share
//   + remove_cost(profile, removed) + redistribution of the removed processes' share
// W: the work of one iteration; S: the sum of the measured speeds; speed_c:
// the mean measured speed of the class's processes, or relative_speed(class)
// x the speed of a PE of relative speed 1 inferred from the fastest measured
// class. With delta all 0 it is the current configuration's remaining run.
// The per-iteration term is multiplied by iteration_correction_at the new count,
// and a change pays OfferSituation::change_settling_seconds besides. With a
// work profile (OfferSituation::profiled_steps) the per-iteration term is
// summed over the profiled intervals still to come instead, computation and
// overhead apart (profiled_iteration), each with its own correction.
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
  /// Measured / modelled time of one iteration per process count (amp's
  /// correction, AmpPolicy): scales the per-iteration term of every
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
  /// first; amp measures it, AmpPolicy): added to every candidate that
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

/// A correction per process count at `processes`: the measured count's,
/// linear between the nearest measured counts below and above, the smallest
/// one's below them, and above them the largest one's plus, if `rising`, the
/// rise per process over the measured range where it rises; 1 with none
/// measured.
[[nodiscard]] double correction_at(const std::map<int, double>& measured, int processes,
                                   bool rising = true);
/// OfferSituation::iteration_corrections at `processes` (correction_at).
[[nodiscard]] double iteration_correction_at(const OfferSituation& situation, int processes);
/// OfferSituation::overhead_offsets at `processes` (correction_at without the
/// trend); 0 with none measured.
[[nodiscard]] double overhead_offset_at(const OfferSituation& situation, int processes);

/// One iteration of a profiled interval, uncorrected, split as the profiled
/// model reads it (thesis 5.3.1-5.3.2 with a profile of the whole run).
struct IterationSplit {
  double computation = 0.0;  ///< inefficiency x work / speed
  /// The profiled overhead plus what the communication replayed on
  /// `processes` takes beyond that on the profiled run's count (5.3.2).
  double overhead = 0.0;
};
[[nodiscard]] IterationSplit profiled_iteration(const OfferSituation& situation,
                                                const ProfiledStep& step, double work_per_iteration,
                                                double speed, int processes);

/// The model's seconds of one balanced iteration (no correction): W / speed
/// plus the communication replayed on `processes` processes.
[[nodiscard]] double modelled_iteration_seconds(const OfferSituation& situation,
                                                const ClassOffers& offers, double speed,
                                                int processes);

/// The predicted seconds of the remaining run after the per-class change
/// `delta` (one entry per offer), as described above; the planners' callback.
[[nodiscard]] double predict_remaining(const OfferSituation& situation, const ClassOffers& offers,
                                       const std::vector<int>& delta);

}  // namespace flexmpi
