// The first piece of the computational prediction model (thesis 5.3): what a
// rebalance gains and what the redistribution it needs costs, so that the
// balancer moves data only when moving pays.
//
// Gain (thesis eq. 5.2, computation term only, predict_interval in
// interval_predictor.hpp): an iteration takes as long as its slowest process,
// max_i t_i; after the move process i computes w'_i work units at its
// measured speed s_i = w_i / t_i, so the iteration takes max_i w'_i / s_i.
// The gain is the difference times the iterations left.
// Communication is left out: a change of the row partition leaves the
// messages of a row-block code (Jacobi's Allgatherv, CG's Allreduce) as they are.
//
// Cost (thesis 5.3.4, priced from flexmpi's own transfer plan rather than
// eq. 5.8-5.10's whole structures): only rows that change owner move, so a
// redistribution takes about latency + max over processes of the bytes the
// process sends and receives, times a price per byte. The price starts from
// a conservative default and is replaced by what the last redistribution
// measured (the slowest process's seconds over the bytes predicted for it).
//
// Pure arithmetic: every process evaluates the same inputs and reaches the same
// decision, so no communication is needed to agree.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/row_block.hpp"

namespace flexmpi {

/// Bytes the busiest process sends plus receives when the decomposition
/// changes from `from` to `to` and each row carries `bytes_per_row` bytes.
double busiest_process_bytes(const Decomposition& from, const Decomposition& to,
                             double bytes_per_row);

/// Seconds a redistribution takes: latency + bytes x seconds per byte, the
/// price per byte calibrated by measured redistributions.
class RedistributionCost {
 public:
  /// Without a machine profile: ~1 GB/s, the order of a shared-memory copy
  /// that also faults in the receiver's new pages, and 0.1 ms for the handshake.
  static constexpr double kDefaultSecondsPerByte = 1e-9;
  static constexpr double kDefaultLatencySeconds = 1e-4;

  RedistributionCost() = default;
  /// Starts from a calibrated price (MachineProfile's "redistribution", thesis
  /// 6.3.1) until redistributions of this run have been measured. Throws
  /// flexmpi::Error (invalid_argument) for a negative or non-finite value.
  RedistributionCost(double latency_seconds, double seconds_per_byte);

  [[nodiscard]] double predict(double bytes) const;
  [[nodiscard]] double latency_seconds() const { return latency_seconds_; }
  /// A redistribution of `bytes` (busiest process) took `seconds` (slowest
  /// process): the latency and the price per byte each move towards what the
  /// measurement says of them, by their share of the predicted cost (the
  /// first measurement all the way, later ones half way, in log space), so
  /// that one disturbed measurement does not set the price alone and a tiny
  /// move does not set the price of large ones.
  void observe(double bytes, double seconds);
  [[nodiscard]] double seconds_per_byte() const { return seconds_per_byte_; }
  [[nodiscard]] int observations() const { return observations_; }
  /// The price learnt elsewhere (a process spawned now takes its parents':
  /// every process must price a move alike, or they decide differently).
  void restore(double latency_seconds, double seconds_per_byte, int observations) {
    latency_seconds_ = latency_seconds;
    seconds_per_byte_ = seconds_per_byte;
    observations_ = observations;
  }

 private:
  double latency_seconds_ = kDefaultLatencySeconds;
  double seconds_per_byte_ = kDefaultSecondsPerByte;
  int observations_ = 0;
};

/// Everything one gain-versus-cost decision reads.
struct RebalanceCase {
  Decomposition current;
  Decomposition proposed;
  /// Per process: seconds of computation per iteration on its current block
  /// (robust over the interval, thesis 4.2 computation time).
  std::vector<double> iteration_seconds;
  /// Per process: workload of its current and of its proposed block, in the
  /// workload model's units (rows, nonzeros or weights).
  std::vector<double> current_work;
  std::vector<double> proposed_work;
  long long remaining_iterations = 0;
  double bytes_per_row = 0.0;  ///< bytes of every distributed structure in one row
};

/// The prediction and the verdict.
struct RebalanceAssessment {
  double iteration_seconds_now = 0.0;       ///< max_i t_i
  double iteration_seconds_balanced = 0.0;  ///< max_i w'_i / s_i
  double gain_seconds = 0.0;                ///< (now - balanced) x remaining iterations
  double bytes = 0.0;                       ///< busiest process, sent + received
  double cost_seconds = 0.0;                ///< RedistributionCost::predict(bytes)
  bool pays = false;                        ///< gain > margin x cost
  std::string reason;                       ///< one line for the trace

  [[nodiscard]] nlohmann::json to_json() const;
};

/// Predicts the gain and the cost of `c` and decides with `margin` (>= 0):
/// move iff gain > margin x cost (and the gain is positive).
RebalanceAssessment assess_rebalance(const RebalanceCase& c, const RedistributionCost& cost,
                                     double margin);

}  // namespace flexmpi
