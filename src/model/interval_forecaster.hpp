// Predicted against measured, interval by interval (thesis 5.3, 6.3; Fig.
// 6.13). When a sampling interval closes, the forecaster predicts the next
// one for the configuration the adaptation loop leaves (the same processes,
// on the blocks after any move) with IntervalPredictor (eq. 5.2); when that
// interval closes in turn, it puts the prediction next to what was measured
// and learns lambda (eq. 5.4-5.5) from the communication term.
//
// Inputs, all from the interval report and this process's PMPI profile:
// work per process (the metric) and the blocks it was measured on; speeds =
// work / computation time; the next interval's total work extrapolated from
// the history of totals (regular applications, 5.3.1); communication = this
// process's PMPI profile of the interval replayed at the machine profile's
// costs. Measured: computation = the slowest process's computation time,
// communication = the least MPI time of any process (the others' is longer
// by their wait for the slowest, which the computation term covers),
// redistribution = the slowest process's, plus the data handed over in a
// process change, and reconfiguration = the spawns and removals (eq. 5.6-5.7)
// as rank 0 timed them. With a work profile of an earlier
// run (FLEXMPI_PROFILE, irregular applications) the next interval's work is
// the profile's, corrected by measured / profiled work of the interval just
// ended (ProfileCorrection); past the profile's end it is extrapolated.
// A change of the process set that the adaptation loop decided is predicted
// like any other candidate (thesis 5.3, Table 6.8): the processes that stay
// keep their speeds, a spawned one gets the mean measured speed, the
// communication profile is replayed at the new size. A change made behind
// the loop's back (XMPI_Spawn called by the application) is not predicted.
// Trace only: decisions do not read it, so rank 0 alone runs it. No MPI.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "model/comm_model.hpp"
#include "model/computation_model.hpp"
#include "model/interval_predictor.hpp"
#include "model/machine_profile.hpp"
#include "monitoring/interval.hpp"

namespace flexmpi {

/// What a process change cost (rank 0's clock), seconds.
struct MeasuredChange {
  double reconfiguration = 0.0;  ///< spawning and removing processes
  double redistribution = 0.0;   ///< handing the data over
};

class IntervalForecaster {
 public:
  /// work_profile: an earlier run's work per interval, or null (extrapolate).
  IntervalForecaster(MachineProfile profile, MpiLibrary library,
                     std::shared_ptr<const WorkProfile> work_profile = nullptr);

  /// The interval `report` just closed. Returns {"prediction": ...} with the
  /// phases predicted for it, those measured and the relative errors, or an
  /// empty object when nothing was predicted for it (the first interval, or
  /// one whose process count is not the one predicted for).
  /// change: what the process change before this interval cost.
  nlohmann::json settle(const IntervalReport& report, MeasuredChange change = {});

  /// Per process, the median speed (work / computation time) of the last
  /// kSpeedWindow settled intervals it measured one in; none when a process
  /// has none yet. One interval alone is no speed to predict with, and the
  /// first on new blocks (data moved, processes changed) is taken only by a
  /// process that has no other: it runs up to 2-3x slower while the process
  /// touches its new rows for the first time (Jacobi, docs/results.md).
  [[nodiscard]] std::vector<double> speeds() const;
  static constexpr std::size_t kSpeedWindow = 3;

  /// Predicts the interval after `report`. measured_rows: the blocks the
  /// work of `report` was measured on; next: the configuration of the next
  /// interval (after the decision): its blocks, the bytes the busiest process
  /// moves to reach them, the processes spawned or removed, and the speeds
  /// (empty: those measured, for the same processes); ops: this process's
  /// PMPI profile of `report`'s interval. Nothing is predicted when nothing
  /// was measured or the sizes do not match.
  void forecast(const IntervalReport& report, std::span<const std::int64_t> measured_rows,
                Candidate next, std::vector<CommOpCount> ops);

  /// The process set changed: the next interval is not predicted.
  void forget() { pending_.reset(); }
  /// Lambda (eq. 5.4-5.5) learnt on `processes` processes (1 before any).
  [[nodiscard]] double lambda(std::size_t processes) const;

 private:
  MachineProfile profile_;
  MpiLibrary library_;
  // Lambda per process count (beyond the thesis): what the model misses
  // depends on the configuration -- 3-6 processes on this machine's 2 cores
  // wait 20-50x the modelled communication for descheduled ranks, 2 do not --
  // so a count's lambda is learnt from, and applied to, that count only.
  std::map<std::size_t, LambdaCorrection> lambda_;
  // The same correction for redistribution and for process creation and
  // removal (beyond the thesis), one per kind of move: the calibrated price of
  // a redistribution is that of warm memory between running processes (a
  // handover to new processes onto oversubscribed cores measured 5-15x it);
  // flexmpi-calibrate spawns itself, 20-40 % slower to start than Jacobi.
  enum MoveKind { kRebalance, kSpawn, kRemove, kMoveKinds };
  struct MoveCorrection {
    LambdaCorrection redistribution;
    LambdaCorrection reconfiguration;
  };
  std::array<MoveCorrection, kMoveKinds> move_correction_{};
  std::shared_ptr<const WorkProfile> work_profile_;
  ProfileCorrection profile_correction_;
  std::vector<double> total_work_;                  // per interval, for extrapolate()
  std::vector<std::vector<double>> speed_history_;  // per rank, oldest first
  struct Pending {
    PredictedInterval raw;        // the model alone: the corrections learn from it
    PredictedInterval corrected;  // with lambda and the move's corrections: the prediction
    MoveKind move = kRebalance;
    std::size_t processes = 0;     // the process count it was predicted for
    const char* work_source = "";  // "profile" or "extrapolation"
    double work = 0.0;             // the total work it was predicted for
  };
  /// Adds the speeds measured in `report` to each rank's history.
  void learn_speeds(const IntervalReport& report, bool new_blocks);
  /// The next interval's total work and where it came from.
  [[nodiscard]] std::pair<double, const char*> next_work(int next, int iterations) const;
  std::optional<Pending> pending_;
};

}  // namespace flexmpi
