// The remaining run of a candidate configuration: what the performance-aware
// malleability policies compare (thesis 5.4.2-5.4.3), built on
// the interval prediction of eq. 5.2 (predict_interval, interval_predictor.hpp)
// for one iteration of the candidate:
//
//   remaining run = remaining iterations x correction(n') x iteration.total()
//                 + settling + reconfiguration + redistribution
//
//   iteration: predict_interval of one iteration on the candidate: all the
//     work W of one iteration on its summed speed S' (eq. 5.3 as printed: the
//     balancer gives rows in proportion to speed) and the interval's
//     communication replayed on its process count n' (5.3.2), per iteration;
//   correction(n'): measured / modelled iteration per process count
//     (RunLearning, beyond the thesis: eq. 5.4-5.5's lambda for the whole
//     iteration), interpolated between counts (correction_at);
//   one-off, when the candidate changes the processes: the settling measured
//     after earlier changes, spawn_cost / remove_cost (eq. 5.6-5.7), and the
//     redistribution (5.3.4) of the new processes' share of the data (data x
//     added speed / S') or of the removed ones' (data x removed speed / S),
//     at the price the controller learnt (RedistributionCost).
//
// With a work profile of an earlier run (RunState::profiled_steps) the
// iteration term is the profiled sum over the intervals still to come,
// scaled to the iterations left, computation (predict_interval of
// inefficiency x W_k on S', corrected) and overhead (the profiled overhead
// plus what the replay on n' takes beyond that on the profiled count, plus
// the measured offset) apart.
//
// Pure arithmetic, no MPI: every process predicts the same from the same inputs.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "model/comm_model.hpp"
#include "model/computation_model.hpp"
#include "model/interval_predictor.hpp"
#include "model/machine_profile.hpp"
#include "model/rebalance_model.hpp"

namespace flexmpi {

/// What the remaining-run prediction reads besides the candidate.
struct RunState {
  const MachineProfile& profile;
  const RedistributionCost& redistribution_cost;
  int processes = 0;  ///< running now
  long long remaining_iterations = 0;
  double work_per_iteration = 0.0;  ///< W, measured
  double current_speed = 0.0;       ///< S, the sum of the measured speeds
  double data_bytes = 0.0;          ///< global rows x bytes per row of the registered data
  /// The interval's communication (nullptr: computation and reconfiguration only).
  const CommunicationReplay* communication = nullptr;
  /// Measured / modelled iteration per process count (empty: the model alone);
  /// with profiled_steps, of the computation only.
  const std::map<int, double>& iteration_corrections;
  /// With profiled_steps: measured - modelled overhead per iteration per count.
  const std::map<int, double>& overhead_offsets;
  double change_settling_seconds = 0.0;  ///< paid by a candidate that changes processes
  /// The profiled intervals from the one measured on (empty: every remaining
  /// iteration is like the one measured).
  const std::vector<ProfiledStep>& profiled_steps;
};

/// A candidate change of the processes, as the prediction reads it.
struct RunChange {
  int spawned = 0;
  int removed = 0;
  double speed = 0.0;          ///< S', the candidate's summed speed (<= 0: S)
  double added_speed = 0.0;    ///< of the spawned processes
  double removed_speed = 0.0;  ///< of the removed processes
};

/// The remaining run predicted for one candidate, by phase.
struct RunPrediction {
  double iterations = 0.0;  ///< remaining
  /// One iteration on the candidate, corrected (computation and
  /// communication; with a profile, the mean over the profiled intervals to
  /// come, the overhead as communication).
  PredictedInterval iteration;
  double iterations_seconds = 0.0;  ///< all the remaining iterations
  double settling = 0.0;
  double reconfiguration = 0.0;  ///< eq. 5.6-5.7
  double redistribution = 0.0;   ///< 5.3.4
  double seconds = 0.0;          ///< the remaining run

  [[nodiscard]] nlohmann::json to_json() const;
};

/// A correction per process count at `processes`: the measured count's,
/// linear between the nearest measured counts below and above, the smallest
/// one's below them, and above them the largest one's plus, if `rising`, the
/// rise per process over the measured range where it rises; 1 with none
/// measured.
[[nodiscard]] double correction_at(const std::map<int, double>& measured, int processes,
                                   bool rising = true);
/// An overhead offset per count at `processes` (correction_at without the
/// trend); 0 with none measured.
[[nodiscard]] double offset_at(const std::map<int, double>& measured, int processes);

/// One balanced iteration on `processes` processes of summed `speed`, by the
/// model alone (no correction).
[[nodiscard]] PredictedInterval modelled_iteration(const RunState& state, double speed,
                                                   int processes);

/// One iteration of a profiled interval, uncorrected, split as the profiled
/// model reads it (thesis 5.3.1-5.3.2 with a profile of the whole run).
struct IterationSplit {
  double computation = 0.0;  ///< inefficiency x work / speed
  /// The profiled overhead plus what the communication replayed on
  /// `processes` takes beyond that on the profiled run's count (5.3.2).
  double overhead = 0.0;
};
[[nodiscard]] IterationSplit profiled_iteration(const RunState& state, const ProfiledStep& step,
                                                double work_per_iteration, double speed,
                                                int processes);

/// The remaining run after `change`, as described at the top.
[[nodiscard]] RunPrediction predict_run(const RunState& state, const RunChange& change);

}  // namespace flexmpi
