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
// redistribution = the slowest process's. With a work profile of an earlier
// run (FLEXMPI_PROFILE, irregular applications) the next interval's work is
// the profile's, corrected by measured / profiled work of the interval just
// ended (ProfileCorrection); past the profile's end it is extrapolated.
// An interval after a
// change of the process set is not predicted (the profile is the old set's).
// Trace only: decisions do not read it, so rank 0 alone runs it. No MPI.
#pragma once

#include <cstdint>
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

class IntervalForecaster {
 public:
  /// work_profile: an earlier run's work per interval, or null (extrapolate).
  IntervalForecaster(MachineProfile profile, MpiLibrary library,
                     std::shared_ptr<const WorkProfile> work_profile = nullptr);

  /// The interval `report` just closed. Returns {"prediction": ...} with the
  /// phases predicted for it, those measured and the relative errors, or an
  /// empty object when nothing was predicted for it (the first interval, or
  /// one after a reconfiguration).
  nlohmann::json settle(const IntervalReport& report);

  /// Predicts the interval after `report`. measured_rows: the blocks the
  /// work of `report` was measured on; next_rows: the blocks of the next
  /// interval (after the decision); busiest_bytes: what the busiest process
  /// moves between them (0 when they are the same); ops: this process's PMPI
  /// profile of `report`'s interval. Nothing is predicted when the sizes do
  /// not match (the process set changed) or nothing was measured.
  void forecast(const IntervalReport& report, std::span<const std::int64_t> measured_rows,
                std::span<const std::int64_t> next_rows, double busiest_bytes,
                std::vector<CommOpCount> ops);

  /// The process set changed: the next interval is not predicted.
  void forget() { pending_.reset(); }
  [[nodiscard]] double lambda() const { return lambda_.lambda(); }

 private:
  MachineProfile profile_;
  MpiLibrary library_;
  LambdaCorrection lambda_;
  std::shared_ptr<const WorkProfile> work_profile_;
  ProfileCorrection profile_correction_;
  std::vector<double> total_work_;  // per interval, for extrapolate()
  struct Pending {
    PredictedInterval phases;
    double uncorrected_communication = 0.0;  // before lambda, to learn it
    const char* work_source = "";            // "profile" or "extrapolation"
    double work = 0.0;                       // the total work it was predicted for
  };
  /// The next interval's total work and where it came from.
  [[nodiscard]] std::pair<double, const char*> next_work(int next, int iterations) const;
  std::optional<Pending> pending_;
};

}  // namespace flexmpi
