// The prediction of one interval (thesis 5.3, eq. 5.1-5.2): computation
// (eq. 5.3, computation_model.hpp) + communication (5.3.2, the last
// interval's PMPI profile replayed, comm_model.hpp, times lambda of eq.
// 5.4-5.5) + process reconfiguration (eq. 5.6-5.7) + data redistribution
// (5.3.4), for a candidate configuration.
//
// predict_interval is the one formula every prediction of flexmpi goes
// through: the trace's (IntervalPredictor below, one sampling interval), the
// balancer's gain (assess_rebalance, rebalance_model.hpp: its computation
// term) and the malleability policies' remaining run (run_predictor.hpp: one
// iteration, times the iterations left, plus the one-off costs).
//
// IntervalPredictor is built once per sampling interval from the current
// state; predict() is then
// evaluated for every candidate (a policy's search evaluates hundreds): O(processes), no
// allocation once the first candidate of the largest size has been seen.
// Pure arithmetic, no MPI. Not thread-safe (one scratch buffer).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/comm_model.hpp"
#include "model/machine_profile.hpp"

namespace flexmpi {

/// What was measured in the interval just ended.
struct CurrentState {
  std::vector<double> work;        ///< measured work per process (metric units)
  std::vector<std::int64_t> rows;  ///< the blocks that work was measured on
  double next_work = 0.0;          ///< total work of the next interval: extrapolate()
                                   ///< (regular) or profiled_work() (irregular)
  std::vector<CommOpCount> comm;   ///< one process's PMPI profile of the interval
                                   ///< (profile_operations of profile_difference)
  double lambda = 1.0;             ///< eq. 5.4-5.5 (LambdaCorrection::lambda())
  bool across_nodes = false;       ///< the communicator spans nodes
};

/// One candidate configuration (thesis 5.4: a set of processing elements and a partition).
struct Candidate {
  std::vector<double> speeds;          ///< per process, metric units per second
  std::vector<std::int64_t> rows;      ///< the candidate partition, same rows as the current
  int spawned = 0;                     ///< processes created to reach it (eq. 5.6)
  int removed = 0;                     ///< processes removed (eq. 5.7)
  double busiest_bytes = 0.0;          ///< redistribution: max over processes of bytes sent +
                                       ///< received (RedistributionEstimate::busiest_bytes)
  std::uint64_t busiest_messages = 0;  ///< and that process's messages
};

/// The predicted interval, per phase (eq. 5.2), seconds.
struct PredictedInterval {
  double computation = 0.0;
  double communication = 0.0;
  double reconfiguration = 0.0;
  double redistribution = 0.0;

  /// Eq. 5.2 (eq. 5.1 when nothing is reconfigured or moved).
  [[nodiscard]] double total() const {
    return computation + communication + reconfiguration + redistribution;
  }
};

/// What eq. 5.2 reads for a span of iterations of a candidate.
struct IntervalTerms {
  std::span<const double> work;    ///< per process of the candidate, work units of the span
  std::span<const double> speeds;  ///< per process, work units per second
  /// The operations measured, replayed on `processes` processes (5.3.2) and
  /// divided by the replay's iterations; nullptr: no communication.
  const CommunicationReplay* communication = nullptr;
  int processes = 0;
  double lambda = 1.0;           ///< eq. 5.4-5.5
  double reconfiguration = 0.0;  ///< seconds: spawn_cost + remove_cost (eq. 5.6-5.7)
  double redistribution = 0.0;   ///< seconds of the data moved (5.3.4), priced by the caller
};

/// Eq. 5.2: computation = max over processes of work / speed (eq. 5.3 per
/// process; all the work on the summed speed is eq. 5.3 as printed, the
/// balanced partition), communication = lambda x the replay (eq. 5.5), the
/// reconfiguration and redistribution given. Throws flexmpi::Error
/// (invalid_argument) as computation_time and replay_communication.
[[nodiscard]] PredictedInterval predict_interval(const IntervalTerms& terms);

/// Predicts the next sampling interval of candidate configurations.
class IntervalPredictor {
 public:
  /// Throws flexmpi::Error (invalid_argument) for work and rows of different
  /// sizes or none, lambda < 0, next_work < 0, or a bad communication profile
  /// (communicator size < 1, negative bytes).
  IntervalPredictor(const MachineProfile& profile, MpiLibrary library, CurrentState state);

  /// Eq. 5.2 for `candidate`. Communication: every operation on a
  /// communicator of the current process count is priced at the candidate's
  /// count, with the same bytes per call (other communicators unchanged).
  /// Throws flexmpi::Error (invalid_argument) for speeds and rows of
  /// different sizes, rows that do not cover the current rows, a speed <= 0
  /// of a process with work, negative counts or bytes.
  [[nodiscard]] PredictedInterval predict(const Candidate& candidate) const;

 private:
  const MachineProfile& profile_;
  CurrentState state_;
  CommunicationReplay communication_;    // the interval's operations, whole (1 iteration)
  mutable std::vector<double> scratch_;  // per-process work of the candidate
};

}  // namespace flexmpi
